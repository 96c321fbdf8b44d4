package loadgen_test

import (
	"math"
	"runtime"
	"testing"

	"loadgen/loadgen"
	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2"
	"loadgen/loadgen/protocol/http1"
	"loadgen/loadgen/protocol/tcp"
	"loadgen/results/cost"
)

func TestProcs(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		threads, cpus, cores int
		quota                float64
		want                 int
	}{
		{"the threads", 4, 0, 8, 0, 4},
		{"--cpus over the threads", 4, 2, 8, 0, 2},
		{"capped by the CPUs", 16, 0, 8, 0, 8},
		{"--cpus capped by the CPUs", 1, 16, 8, 0, 8},
		{"capped by a quota, rounded up", 8, 0, 8, 2.5, 3},
		{"a quota under a core is one", 8, 0, 8, 0.2, 1},
		{"a quota above the CPUs", 4, 0, 8, 16, 4},
		{"CPUs unknown", 4, 0, 0, 0, 4},
		{"no quota: +Inf", 2, 0, 8, math.Inf(1), 2},
		{"a huge quota", 2, 0, 8, 1e300, 2},
		{"NaN is no quota", 2, 0, 8, math.NaN(), 2},
		{"at least one", 0, 0, 8, 0, 1},
	} {
		if got := loadgen.Procs(tc.threads, tc.cpus, tc.cores, tc.quota); got != tc.want {
			t.Errorf("%s: Procs(%d, %d, %d, %g) = %d, want %d", tc.name, tc.threads, tc.cpus, tc.cores, tc.quota, got, tc.want)
		}
	}
}

// A run on event loops gets one P above its processors, so that its loops
// may wait holding theirs; a run on goroutines gets exactly its processors.
func TestMaxProcsSparePForLoops(t *testing.T) {
	rr, err := tcp.NewDialer(tcp.Config{Addr: "127.0.0.1:9", Mode: tcp.RR, Size: 64})
	if err != nil {
		t.Fatal(err)
	}
	h2c, err := h2.NewDialer(h2.Config{URL: "http://127.0.0.1:9/", Cleartext: true})
	if err != nil {
		t.Fatal(err)
	}
	h2tls, err := h2.NewDialer(h2.Config{URL: "https://127.0.0.1:9/"})
	if err != nil {
		t.Fatal(err)
	}
	h1tls, err := http1.NewDialer(http1.Config{URL: "https://127.0.0.1:9/"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		d       protocol.Dialer
		newConn bool
		want    int
	}{
		{"tcp-rr (loops)", rr, false, 3}, {"h2c (loops)", h2c, false, 3}, {"h2 over TLS (loops)", h2tls, false, 3},
		{"HTTP/1.1 over TLS (loops)", h1tls, false, 3}, {"HTTP/1.1 over TLS --new-conn (goroutines)", h1tls, true, 2},
	} {
		var cfg loadgen.Config
		cfg.Connections, cfg.Threads, cfg.NewConn, cfg.Procs = 2, 2, tc.newConn, 2
		if got := loadgen.MaxProcs(cfg, tc.d); got != tc.want {
			t.Errorf("%s at 2 processors: MaxProcs %d, want %d", tc.name, got, tc.want)
		}
	}
}

// LocalProcs is Procs with this machine's CPUs and the process's quota:
// never more than the CPUs, at least 1, --cpus over the threads.
func TestLocalProcs(t *testing.T) {
	online := runtime.NumCPU()
	quota, ok := cost.CPUQuota()
	if !ok {
		quota = 0
	}
	for _, tc := range []struct{ threads, cpus int }{{1, 0}, {4, 0}, {1, 2}, {online + 8, 0}, {1, online + 8}, {0, 0}} {
		got := loadgen.LocalProcs(tc.threads, tc.cpus)
		if want := loadgen.Procs(tc.threads, tc.cpus, online, quota); got != want || got < 1 || got > online {
			t.Errorf("LocalProcs(%d, %d) = %d, want %d (Procs on %d CPUs, quota %g)", tc.threads, tc.cpus, got, want, online, quota)
		}
	}
}
