package report

import (
	"testing"
	"time"

	"loadgen/results"
)

func TestStepFigures(t *testing.T) {
	run := func(proto string, rps, written float64, requests int64, interrupted bool, g *results.Datagrams) *results.Step {
		return &results.Step{Run: &results.Run{Config: results.Config{Protocol: proto}, Interrupted: interrupted, Summary: results.Summary{
			RPS: rps, WritePerSec: written, Requests: requests, Errors: results.Errors{Timeout: 3}, Datagrams: g,
			Latency: results.Latency{P50: results.Duration(210 * time.Microsecond), P99: results.Duration(2 * time.Millisecond)},
		}}}
	}
	for _, tc := range []struct {
		name string
		st   *results.Step
		want string
	}{
		{"requests", run("http1", 15079, 0, 45244, false, nil), "15079 req/s, p50 210us, p99 2.00ms, errors 3"},
		{"a stream in Gbit/s, no latency", run("tcp-stream", 266632, 272.5e6, 500000, false, nil), "2.18 Gbit/s, errors 3"},
		{"transactions", run("tcp-rr", 40798, 0, 500000, false, nil), "40798 trans/s, p50 210us, p99 2.00ms, errors 3"},
		{"messages", run("grpc-stream", 5210, 0, 500000, false, nil), "5210 msgs/s, p50 210us, p99 2.00ms, errors 3"},
		{"datagrams lost", run("udp-rr", 900, 0, 900, false, &results.Datagrams{Sent: 1000, Received: 900, Lost: 100}),
			"900 trans/s, p50 210us, p99 2.00ms, lost 100 (10.00%), errors 3"},
		{"interrupted, no response", run("http1", 0, 0, 0, true, nil), "interrupted: no response, errors 3"},
		{"failed", &results.Step{Failed: "cannot connect"}, "failed: cannot connect"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := StepFigures(tc.st); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestFlagName(t *testing.T) {
	for letter, want := range map[string]string{"G": "generator saturated", "M": "machine saturated", "F": "failed", "X": ""} {
		if got := FlagName(letter); got != want {
			t.Errorf("FlagName(%q) = %q, want %q", letter, got, want)
		}
	}
}
