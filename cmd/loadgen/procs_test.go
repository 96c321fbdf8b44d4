package main

import (
	"runtime"
	"testing"

	"loadgen/loadgen"
	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/http1"
	"loadgen/loadgen/protocol/tcp"
)

// setProcs applies loadgen.MaxProcs (whose policy loadgen's
// TestMaxProcsSparePForLoops tests across protocols): a run on event loops
// gets one P above its processors, one on goroutines exactly its
// processors, and Config.Procs is the processors either way.
func TestSetProcsSparePForLoops(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	rr, err := tcp.NewDialer(tcp.Config{Addr: "127.0.0.1:9", Mode: tcp.RR, Size: 64})
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
		{"tcp-rr (loops)", rr, false, 2}, {"HTTP/1.1 over TLS --new-conn (goroutines)", h1tls, true, 1},
	} {
		var cfg loadgen.Config
		cfg.Connections, cfg.Threads, cfg.NewConn = 1, 1, tc.newConn
		setProcs(&cfg, tc.d, 1, 0)
		if cfg.Procs != 1 || runtime.GOMAXPROCS(0) != tc.want {
			t.Errorf("%s at -t 1: Procs %d, GOMAXPROCS %d; want 1 and %d", tc.name, cfg.Procs, runtime.GOMAXPROCS(0), tc.want)
		}
	}
}
