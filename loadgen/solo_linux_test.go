package loadgen

import (
	"testing"

	"loadgen/loadgen/pace"
	"loadgen/loadgen/protocol"
)

// A loop reads blocking only where nothing else can need it meanwhile:
// one kept-alive connection, closed loop, its P kept.
func TestSoloAllowed(t *testing.T) {
	type mux struct{ protocol.MuxDialer }
	for _, tc := range []struct {
		name    string
		holdP   bool
		mux     bool
		newConn bool
		pacer   pace.Pacer
		conns   int
		want    bool
	}{
		{"one connection", true, false, false, nil, 1, true},
		{"P not kept", false, false, false, nil, 1, false},
		{"two connections", true, false, false, nil, 2, false},
		{"open loop", true, false, false, pace.Constant{PerSec: 100}, 1, false},
		{"a connection per request", true, false, true, nil, 1, false},
		{"multiplexed", true, true, false, nil, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := &loop{e: &engine{pacer: tc.pacer}, holdP: tc.holdP, newConn: tc.newConn, conns: make([]*lconn, tc.conns)}
			if tc.mux {
				l.md = mux{}
			}
			if got := l.soloAllowed(); got != tc.want {
				t.Errorf("solo %v, want %v", got, tc.want)
			}
		})
	}
}
