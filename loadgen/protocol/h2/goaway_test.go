package h2

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"loadgen/loadgen"
	"loadgen/results"
)

// A server that ends every connection with a GOAWAY after N requests, as
// nginx does at keepalive_requests (default 1000) and Envoy at
// max_requests_per_connection: the streams in flight above the GOAWAY's
// last stream are not processed. A real client sends those, and the
// requests after the GOAWAY, on a new connection: through the engine,
// every request is answered, none is an error, the generator's count is
// the server's, and there is a connection per N requests.
func TestGoAwayEveryNRequests(t *testing.T) {
	const perConn = 20
	var served, conns atomic.Int64
	addr := startPeer(t, nil, func(p *peer) {
		conns.Add(1)
		n := 0
		for {
			h := p.request()
			if h == nil {
				return
			}
			if n++; n > perConn {
				continue // above the GOAWAY's last stream: not processed
			}
			p.respond(h.StreamID, "200", 5)
			served.Add(1)
			if n == perConn {
				p.mu.Lock()
				p.fr.WriteGoAway(h.StreamID, http2.ErrCodeNo, nil)
				p.mu.Unlock()
			}
		}
	})
	d, err := NewDialer(Config{URL: "http://" + addr + "/", Cleartext: true, Streams: 4})
	if err != nil {
		t.Fatal(err)
	}
	var cfg loadgen.Config
	cfg.Target, cfg.Protocol = "http://"+addr+"/", "h2c"
	cfg.Connections, cfg.Streams, cfg.Threads = 2, 4, 1
	cfg.Duration = results.Duration(time.Second)
	r, err := loadgen.Run(context.Background(), cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	s := r.Summary
	if s.Requests < 10*perConn {
		t.Fatalf("%d requests in a second: want many connections' worth", s.Requests)
	}
	if s.Errors.Total() != 0 {
		t.Errorf("errors %+v: a request the server did not process must be sent again, not failed", s.Errors)
	}
	// Requests in flight when the run stopped may have been answered after
	// the measured window: the server served at least what was counted.
	if got, srv := s.Requests, served.Load(); got > srv || srv > got+int64(cfg.Connections*cfg.Streams) {
		t.Errorf("generator counted %d, server served %d", got, srv)
	}
	if want := s.Requests / perConn; s.Connections.Established < want {
		t.Errorf("%d connections for %d requests at %d per connection", s.Connections.Established, s.Requests, perConn)
	}
}
