package loadgen_test

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"loadgen/loadgen"
	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/http1"
	"loadgen/results"
)

// --tls-resume: connections made again (the server closes each after its
// answer) resume the session of an earlier one, on both drivers — on the
// event loop through the handshake its opening goroutine does; without it
// every handshake is full.
func TestTLSResume(t *testing.T) {
	var full, resumed atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Connection", "close")
		w.Write([]byte("hello"))
	}))
	srv.TLS = &tls.Config{VerifyConnection: func(cs tls.ConnectionState) error {
		if cs.DidResume {
			resumed.Add(1)
		} else {
			full.Add(1)
		}
		return nil
	}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	for _, drv := range []string{loadgen.DriverLoop, loadgen.DriverGoroutines} {
		for _, resume := range []bool{true, false} {
			name := drv + "/no-resume"
			if resume {
				name = drv + "/resume"
			}
			t.Run(name, func(t *testing.T) {
				full.Store(0)
				resumed.Store(0)
				d, err := http1.NewDialer(http1.Config{URL: srv.URL, TLS: protocol.TLS{Insecure: true, Resume: resume}})
				if err != nil {
					t.Fatal(err)
				}
				var cfg loadgen.Config
				// 2 s: under -race on a busy machine 500 ms held 15
				// handshakes; the checks need ten or so, not a rate.
				cfg.Connections, cfg.Threads, cfg.Duration = 2, 1, results.Duration(2*time.Second)
				cfg.Driver, cfg.Target = drv, srv.URL
				r, err := loadgen.Run(t.Context(), cfg, d)
				if err != nil {
					t.Fatal(err)
				}
				if r.Config.Driver != drv {
					t.Fatalf("run by %q, asked %q", r.Config.Driver, drv)
				}
				s := r.Summary
				f, res := full.Load(), resumed.Load()
				if s.Requests < 10 || s.Errors.Total() != 0 {
					t.Fatalf("%d requests, errors %+v: want a connection per request, answered", s.Requests, s.Errors)
				}
				t.Logf("%d requests: %d full handshakes, %d resumed", s.Requests, f, res)
				if resume {
					// The two first connections handshake in full, at once;
					// the ones after them find a ticket.
					if f > 4 || res < int64(s.Requests)-4 {
						t.Errorf("%d full handshakes and %d resumed for %d requests, each on its own connection", f, res, s.Requests)
					}
				} else if res != 0 || f < int64(s.Requests) {
					t.Errorf("without --tls-resume: %d handshakes resumed, %d full for %d requests", res, f, s.Requests)
				}
			})
		}
	}
}
