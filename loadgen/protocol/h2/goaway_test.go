package h2

import (
	"context"
	"testing"
	"time"

	"loadgen/loadgen"
	"loadgen/loadgen/protocol/h2conn/h2peer"
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
	srv := &h2peer.EveryN{PerConn: 20, Respond: func(p *peer, id uint32) { p.Respond(id, "200", 5) }}
	addr := startPeer(t, nil, srv.Serve)
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
	srv.Check(t, r.Summary, cfg.Connections*cfg.Streams)
}
