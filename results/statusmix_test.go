package results

import (
	"strings"
	"testing"
)

func TestStatusMix(t *testing.T) {
	for _, tc := range []struct {
		name      string
		protocol  string
		got, base map[int]int64
		want      string // "" or a part of the line
	}{
		{"same", "http1", map[int]int64{200: 10}, map[int]int64{200: 12}, ""},
		{"same class", "h2c", map[int]int64{200: 10, 204: 1}, map[int]int64{200: 12}, ""},
		{"overload is measured", "http1", map[int]int64{200: 10, 503: 4}, map[int]int64{200: 12}, ""},
		{"redirect", "http1", map[int]int64{308: 1000}, map[int]int64{200: 900},
			"nginx answered 308 to every request: the target was never reached (the baseline (direct) answered 200)"},
		{"some redirects", "http1", map[int]int64{200: 750, 302: 250}, map[int]int64{200: 900},
			"nginx answered 302 to 25.0% of requests: those requests never reached the target"},
		{"not found", "http1", map[int]int64{404: 8, 200: 2}, map[int]int64{200: 900}, "nginx answered 404 to 80.0% of requests: those answers were not the target's"},
		{"baseline off", "http1", map[int]int64{200: 10}, map[int]int64{301: 9},
			"the baseline (direct) answered 301 to every request where nginx answered 200"},
		{"grpc", "grpc", map[int]int64{12: 5}, map[int]int64{0: 9}, "nginx answered Unimplemented (12) to every request"},
		{"grpc overload", "grpc-stream", map[int]int64{0: 5, 14: 3}, map[int]int64{0: 9}, ""},
		{"tcp", "tcp-rr", map[int]int64{0: 5}, map[int]int64{0: 9}, ""},
		{"no baseline answer", "http1", map[int]int64{200: 5}, map[int]int64{}, ""},
		{"no answer", "http1", nil, map[int]int64{200: 9}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := StatusMix(tc.protocol, "nginx", tc.got, "direct", tc.base)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("%q, want %q", got, tc.want)
			}
		})
	}
}

// TestFailStatusMixes checks that a path's step is failed against its
// baseline's at the same rung, payload, rate and repeat, whichever ran first,
// once.
func TestFailStatusMixes(t *testing.T) {
	step := func(path string, baseline bool, rung string, status map[int]int64) *Step {
		return &Step{Path: path, Baseline: baseline, Rung: rung, Repeat: 1,
			Run: &Run{Config: Config{Protocol: "http1"}, Summary: Summary{Requests: 100, Status: status}}}
	}
	nginx := step("nginx", false, "c4t4", map[int]int64{308: 100})
	other := step("nginx", false, "c8t8", map[int]int64{200: 100})
	if got := FailStatusMixes([]*Step{nginx, other}); len(got) != 0 {
		t.Fatalf("failed %v without a baseline", got)
	}
	steps := []*Step{nginx, other, step("direct", true, "c4t4", map[int]int64{200: 90}), step("direct", true, "c8t8", map[int]int64{200: 90})}
	got := FailStatusMixes(steps)
	if len(got) != 1 || got[0] != nginx || !strings.Contains(nginx.Failure(), "308 to every request") || other.Failure() != "" {
		t.Fatalf("failed %v: %q, %q", got, nginx.Failed, other.Failed)
	}
	if again := FailStatusMixes(steps); len(again) != 0 {
		t.Errorf("failed again: %v", again)
	}
}
