package http1

import (
	"context"
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"loadgen/internal/allocs"
	"loadgen/internal/race"

	"loadgen/loadgen/protocol"
	"loadgen/targets/tlscert"
)

// TestZeroAllocs proves the hot path: a Do on an established connection
// allocates nothing, with or without a deadline, for a small body, a request
// body, an error status and a 1 MiB body. The fasthttp server shares the
// process, so its allocations would count too; it makes none either. Over
// TLS, crypto/tls itself allocates.
func TestZeroAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are measured without -race (make test)")
	}
	fs := startFast(t, nil)
	cert, err := tlscert.New(tlscert.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	tfs := startFast(t, &tls.Config{Certificates: []tls.Certificate{cert.TLS}})
	cases := []struct {
		name string
		cfg  Config
		max  uint64
	}{
		{"GET", Config{URL: "http://" + fs.addr + "/hello"}, 0},
		{"POST", Config{URL: "http://" + fs.addr + "/hello", Method: "POST", Body: []byte(strings.Repeat("b", 1000))}, 0},
		{"404", Config{URL: "http://" + fs.addr + "/status/404"}, 0},
		{"--ok-status", Config{URL: "http://" + fs.addr + "/hello", OKStatus: okStatus(t, "200-299,404")}, 0},
		{"1MiB", Config{URL: "http://" + fs.addr + "/big"}, 0},
		// Fields render into a buffer the connection keeps: made at its
		// first request (the warm-up), grown only by a longer request;
		// none per request after that.
		{"fields", Config{URL: "http://" + fs.addr + "/hello?n={{seq}}&r={{rand 1000}}", Method: "POST", Feed: allocFeed(t),
			Headers: []string{"X-Id: {{uuid}}", "X-User: {{row.user}}"}, Body: []byte(`{"at":{{now}},"user":"{{row.user}}"}`)}, 0},
		// crypto/tls allocates one small atLeastReader per record it reads
		// (tls.Conn.readFromUntil): one on this side, one on the server's.
		{"TLS", Config{URL: "https://" + tfs.addr + "/hello", TLS: protocol.TLS{Insecure: true}}, 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, c := dial(t, tc.cfg)
			ctx := context.Background()
			var bad protocol.Outcome
			do := func(timed bool) func() {
				return func() {
					var deadline time.Time
					if timed {
						deadline = time.Now().Add(5 * time.Second)
					}
					if o := c.Do(ctx, deadline); o.Err != protocol.None && o.Err != protocol.Status {
						bad = o
					}
				}
			}
			do(true)() // warm up: buffers grow to size
			for _, timed := range []bool{true, false} {
				if n := allocs.Count(100, do(timed)); n > allocs.TLSReads(100*tc.max)+allocs.Slack {
					t.Errorf("deadline %v: %d allocations in 100 Dos, want at most %d each", timed, n, tc.max)
				}
			}
			if bad != (protocol.Outcome{}) {
				t.Fatalf("a request failed: %+v", bad)
			}
		})
	}
}

// TestZeroAllocsChunked checks a chunked response, served by a server that
// itself allocates nothing per request.
func TestZeroAllocsChunked(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are measured without -race (make test)")
	}
	addr := startFixed(t, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n"+
		"5\r\nhello\r\n6\r\n world\r\n0\r\nX-T: 1\r\n\r\n")
	_, c := dial(t, Config{URL: "http://" + addr + "/"})
	c.Do(context.Background(), soon())
	var bad protocol.Outcome
	n := allocs.Count(100, func() {
		if o := c.Do(context.Background(), soon()); o.Err != protocol.None || o.Done {
			bad = o
		}
	})
	if bad != (protocol.Outcome{}) {
		t.Fatalf("a request failed: %+v", bad)
	}
	if n > allocs.Slack {
		t.Errorf("%d allocations in 100 chunked Dos, want 0", n)
	}
}

func allocFeed(t *testing.T) *protocol.Feed {
	t.Helper()
	f, err := protocol.ParseFeed("users.csv", []byte("user\nada\nbob\ncy\n"))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func okStatus(t *testing.T, s string) protocol.StatusSet {
	t.Helper()
	ok, err := protocol.ParseStatusSet(s)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}
