package nginxingress

import (
	"fmt"
	"strings"
	"testing"

	"loadgen/targets/tlscert"
)

func TestParseWorkers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string // the counts, or the error
	}{
		{"1,2,4", "[1 2 4]"},
		{"1..3", "[1 2 3]"},
		{" 2 , 8 ", "[2 8]"},
		{"", "[1 2 3 4]"}, // 1..cpus
		{"0", `"0": "0" is not a worker count (1 or more)`},
		{"1,,2", `"1,,2": "" is not a worker count (1 or more)`},
		{"3..1", `"3..1": want a range like 1..4`},
		{"1..x", `"1..x": want a range like 1..4`},
		{"1..65", `"1..65": 65 worker counts is more than 64`},
		{"1..999999999", `"1..999999999": 999999999 worker counts is more than 64`}, // refused before a list is built
		{"1..64", "64 counts"},
		{"1,2000", `"1,2000": 2000 workers is more than 1024`},
	} {
		got, err := ParseWorkers(tc.in, 4)
		s := fmt.Sprint(got)
		if err != nil {
			s = err.Error()
		} else if len(got) > 10 {
			s = fmt.Sprintf("%d counts", len(got))
		}
		if s != tc.want {
			t.Errorf("ParseWorkers(%q) = %s, want %s", tc.in, s, tc.want)
		}
	}
}

func FuzzParseWorkers(f *testing.F) {
	for _, s := range []string{"1,2,4", "1..36", "0", "-1", "1..", "..", "9999999999999999999", "1,,2", "1..999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ws, err := ParseWorkers(s, 4)
		if err != nil {
			return
		}
		if len(ws) == 0 || len(ws) > MaxSizingCounts {
			t.Fatalf("%q: %d worker counts", s, len(ws))
		}
		for _, n := range ws {
			if n < 1 || n > MaxSizingWorkers {
				t.Fatalf("%q: worker count %d", s, n)
			}
		}
	})
}

// TestSizingText: what a dry run says of a planned nginx, and what the
// report says of the sizing's paths, by key type and mutual TLS.
func TestSizingText(t *testing.T) {
	plan := SizingPlan([]int{2})
	for _, tc := range []struct {
		p    SizingProxy
		mtls bool
		want string
	}{
		{plan[0], false, "nginx, worker_processes 2, started by loadgen"},
		{plan[1], false, "nginx, worker_processes 2, TLS with a new connection per request, started by loadgen"},
		{plan[1], true, "nginx, worker_processes 2, mutual TLS with a new connection per request, started by loadgen"},
	} {
		if got := tc.p.Planned(tc.mtls); got != tc.want {
			t.Errorf("%s mtls %v: %q, want %q", tc.p.Name, tc.mtls, got, tc.want)
		}
	}
	for i, p := range PlannedSizing([]int{2}, true) {
		if want := plan[i].Planned(true); p.URL != want || p.Name != plan[i].Name || p.PID != 0 {
			t.Errorf("PlannedSizing's %d: %+v, want %s at %q", i, p, plan[i].Name, want)
		}
	}
	if got := SizingNote(42, tlscert.RSA2048, false); !strings.Contains(got, "httpbin (42)") || !strings.Contains(got, "full RSA-2048 handshake per request (session cache and tickets off). ") {
		t.Errorf("note: %q", got)
	}
	if got := SizingNote(42, tlscert.ECDSAP256, true); !strings.Contains(got, "full ECDSA P-256 handshake per request (session cache and tickets off), mutual: nginx requires and verifies the load's client certificate (ECDSA P-256). ") {
		t.Errorf("mutual note: %q", got)
	}
}

// TestOverCPUs: a sizing warns when its largest worker count passes the
// machine's CPUs, and only then.
func TestOverCPUs(t *testing.T) {
	const tail = ": nginx's workers past %d share CPUs with each other, the target and the generator, so those counts measure contention, not how nginx scales"
	for _, tc := range []struct {
		workers []int
		cpus    int
		want    string
	}{
		{[]int{1, 2, 4}, 4, ""},
		{[]int{1}, 1, ""},
		{nil, 1, ""},
		{[]int{1, 2, 8, 4}, 4, "--workers up to 8 on 4 CPUs" + fmt.Sprintf(tail, 4)},
		{[]int{2}, 1, "--workers up to 2 on 1 CPU" + fmt.Sprintf(tail, 1)},
	} {
		if got := OverCPUs(tc.workers, tc.cpus); got != tc.want {
			t.Errorf("OverCPUs(%v, %d) = %q, want %q", tc.workers, tc.cpus, got, tc.want)
		}
	}
}
