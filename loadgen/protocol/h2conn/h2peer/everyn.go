package h2peer

import (
	"sync/atomic"
	"testing"

	"loadgen/results"
)

// EveryN is a server that ends every connection with a GOAWAY after
// PerConn requests, as nginx does at keepalive_requests and Envoy at
// max_requests_per_connection: the requests above the GOAWAY's last
// stream are not processed. A client must send those again on a new
// connection.
type EveryN struct {
	PerConn int
	Respond func(p *Peer, id uint32) // answers one request
	Served  atomic.Int64
}

// Serve is the server's script for one connection (for Start).
func (e *EveryN) Serve(p *Peer) {
	for n := 1; ; n++ {
		h := p.Request()
		if h == nil {
			return
		}
		if n > e.PerConn {
			continue // above the GOAWAY's last stream: not processed
		}
		// Counted before the answer is written: the generator may count it
		// and the test read Served before this goroutine runs again.
		e.Served.Add(1)
		e.Respond(p, h.StreamID)
		if n == e.PerConn {
			p.GoAway(h.StreamID)
		}
	}
}

// Check checks the summary of a run of about a second against the server,
// with inFlight requests at once: every request was answered, none failed,
// the generator counted what the server served, and there was a
// connection per PerConn requests.
func (e *EveryN) Check(t testing.TB, s results.Summary, inFlight int) {
	t.Helper()
	t.Logf("%d requests, %d served, %d connections", s.Requests, e.Served.Load(), s.Connections.Established)
	if s.Requests < 10*int64(e.PerConn) {
		t.Fatalf("%d requests in a second: want many connections' worth", s.Requests)
	}
	if s.Errors.Total() != 0 {
		t.Errorf("errors %+v: a request the server did not process must be sent again, not failed", s.Errors)
	}
	// Requests in flight when the run stopped may have been answered after
	// the measured window: the server served at least what was counted.
	if got, srv := s.Requests, e.Served.Load(); got > srv || srv > got+int64(inFlight) {
		t.Errorf("generator counted %d, server served %d", got, srv)
	}
	if want := s.Requests / int64(e.PerConn); s.Connections.Established < want {
		t.Errorf("%d connections for %d requests at %d per connection", s.Connections.Established, s.Requests, e.PerConn)
	}
}
