package loadgen_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"loadgen/loadgen"
	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2"
	"loadgen/loadgen/protocol/http1"
	"loadgen/results"
	"loadgen/targets/tlscert"
)

// pathServer is a real HTTP server on loopback that counts what it
// answered by method and path, and answers /slow late and /fail with 503.
type pathServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen map[string]int64
	bad  []string
}

func newPathServer(t *testing.T, start func(*httptest.Server)) *pathServer {
	t.Helper()
	s := &pathServer{seen: map[string]int64{}}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		key := r.Method + " " + r.URL.Path
		s.mu.Lock()
		s.seen[key]++
		if r.Method == "POST" && string(body) != "payload" || r.Header.Get("X-All") != "1" {
			s.bad = append(s.bad, fmt.Sprintf("%s body %q X-All %q", key, body, r.Header.Get("X-All")))
		}
		s.mu.Unlock()
		switch r.URL.Path {
		case "/slow":
			time.Sleep(2 * time.Millisecond)
		case "/fail":
			w.WriteHeader(503)
		}
		w.Write([]byte("hello"))
	}))
	start(s.Server)
	t.Cleanup(s.Close)
	return s
}

func (s *pathServer) counts() (map[string]int64, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := map[string]int64{}
	for k, v := range s.seen {
		m[k] = v
	}
	return m, s.bad
}

// mixOf is the three weighted requests of the tests: a GET named by a
// name line, a POST with a body, and a GET that the target answers 503,
// named by their method and path.
var mixOf = struct {
	names   []string
	weights []int
	reqs    func(base string) []http1.Request
}{
	names:   []string{"slow", "POST /post", "GET /fail"},
	weights: []int{1, 2, 3},
	reqs: func(base string) []http1.Request {
		return []http1.Request{
			{Method: "GET", URL: base + "/slow?q=1"},
			{Method: "POST", URL: base + "/post", Body: []byte("payload")},
			{Method: "GET", URL: base + "/fail", Headers: []string{"X-Own: 1"}},
		}
	},
}

// mixDialer is the protocol of the tests of the moment (forDrivers) with
// the mix's requests to base.
func mixDialer(t *testing.T, base string) protocol.Dialer {
	t.Helper()
	reqs := mixOf.reqs(base)
	hdrs := []string{"X-All: 1"}
	if h2c {
		var h2reqs []h2.Request
		for _, r := range reqs {
			h2reqs = append(h2reqs, h2.Request(r))
		}
		d, err := h2.NewDialer(h2.Config{URL: base, Cleartext: true, Headers: hdrs, Requests: h2reqs})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	d, err := http1.NewDialer(http1.Config{URL: base, Headers: hdrs, TLS: protocol.TLS{Insecure: overTLS}, Requests: reqs})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func mixRun(t *testing.T, cfg loadgen.Config, d protocol.Dialer) *results.Run {
	t.Helper()
	cfg.Threads, cfg.Driver = 1, driver
	cfg.Mix = &loadgen.Mix{Weights: mixOf.weights, Names: mixOf.names}
	r, err := loadgen.Run(context.Background(), cfg, d)
	if err != nil {
		t.Fatal(err)
	}
	if driver != loadgen.DriverAuto && r.Config.Driver != driver {
		t.Fatalf("run by %q, asked %q", r.Config.Driver, driver)
	}
	return r
}

// checkMix checks a run's figures by name against what the server
// answered: each name's own requests, statuses and latencies; its share
// of the requests within 2% of its weight's (exactly its weight's when
// exact), every request counted once.
func checkMix(t *testing.T, r *results.Run, srv *pathServer, exact bool) {
	t.Helper()
	seen, bad := srv.counts()
	if len(bad) > 0 {
		t.Fatalf("the server got requests that were not the mix's: %v", bad[:min(3, len(bad))])
	}
	by := r.RequestsByName
	if len(by) != 3 {
		t.Fatalf("%d names, want 3: %+v", len(by), by)
	}
	paths := []string{"GET /slow", "POST /post", "GET /fail"}
	var total, requests int64
	for i, nr := range by {
		if nr.Name != mixOf.names[i] || nr.Weight != mixOf.weights[i] || math.Abs(nr.WeightShare-float64(nr.Weight)/6) > 1e-9 {
			t.Errorf("name %d: %+v", i, nr)
		}
		if nr.Requests != seen[paths[i]] || nr.Latency.Count != nr.Requests {
			t.Errorf("%s: %d answered, %d in its latency; the server answered %d", nr.Name, nr.Requests, nr.Latency.Count, seen[paths[i]])
		}
		if d := nr.Share - nr.WeightShare; math.Abs(d) > 0.02*nr.WeightShare || exact && math.Abs(d) > 1e-9 {
			t.Errorf("%s: share %.4f of the requests, weight %.4f", nr.Name, nr.Share, nr.WeightShare)
		}
		wantStatus := 200
		if i == 2 {
			wantStatus = 503
			if nr.Errors.Status != nr.Requests {
				t.Errorf("%s: %d error statuses of %d", nr.Name, nr.Errors.Status, nr.Requests)
			}
		} else if nr.Errors.Total() != 0 {
			t.Errorf("%s: errors %+v", nr.Name, nr.Errors)
		}
		if nr.Status[wantStatus] != nr.Requests || len(nr.Status) != 1 {
			t.Errorf("%s: status %v, want %d × %d", nr.Name, nr.Status, nr.Requests, wantStatus)
		}
		if nr.RPS <= 0 || nr.Latency.P50 <= 0 || nr.Latency.P99 < nr.Latency.P50 {
			t.Errorf("%s: rps %.0f, latency %+v", nr.Name, nr.RPS, nr.Latency)
		}
		total += nr.Latency.Count
		requests += nr.Requests
	}
	if total != r.Summary.Latency.Count || requests != r.Summary.Requests || by[2].Errors.Status != r.Summary.Errors.Status {
		t.Errorf("by name: %d requests, %d answered, %d error statuses; the summary: %d, %d, %d",
			total, requests, by[2].Errors.Status, r.Summary.Latency.Count, r.Summary.Requests, r.Summary.Errors.Status)
	}
	// The slow one is slow: its latency is its own, not the mix's.
	if by[0].Latency.P50 < results.Duration(2*time.Millisecond) || by[1].Latency.P50 >= by[0].Latency.P50 {
		t.Errorf("p50: slow %v, post %v", by[0].Latency.P50, by[1].Latency.P50)
	}
}

// A request mix of weights 1, 2 and 3 sends each request its share —
// exactly, with -n — on every driver and protocol, closed loop and open,
// and reports each name's own counts, statuses and latency.
func TestMix(t *testing.T) {
	forDrivers(t, func(t *testing.T) {
		t.Run("closed loop", func(t *testing.T) {
			srv := newPathServer(t, startBoth)
			cfg := conf(4, time.Minute)
			cfg.Requests = 600
			r := mixRun(t, cfg, mixDialer(t, srv.URL))
			checkMix(t, r, srv, true)
			if by := r.RequestsByName; by[0].Requests != 100 || by[1].Requests != 200 || by[2].Requests != 300 {
				t.Errorf("-n 600 of weights 1, 2, 3: %d, %d, %d", by[0].Requests, by[1].Requests, by[2].Requests)
			}
		})
		t.Run("open loop", func(t *testing.T) {
			srv := newPathServer(t, startBoth)
			cfg := conf(4, time.Second)
			cfg.Rate = 1200
			r := mixRun(t, cfg, mixDialer(t, srv.URL))
			if r.Summary.Pacing == nil || r.Summary.Latency.Count < 600 {
				t.Fatalf("open loop: %d requests, pacing %+v", r.Summary.Latency.Count, r.Summary.Pacing)
			}
			checkMix(t, r, srv, false)
		})
	})
}

// Over h2 (TLS), on both drivers: the streams of one connection send the
// mix's requests, each its own.
func TestMixH2TLS(t *testing.T) {
	cert, err := tlscert.New(tlscert.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	for _, drv := range []string{loadgen.DriverLoop, loadgen.DriverGoroutines} {
		t.Run(drv, func(t *testing.T) {
			srv := newPathServer(t, func(s *httptest.Server) {
				s.TLS = &tls.Config{Certificates: []tls.Certificate{cert.TLS}}
				s.EnableHTTP2 = true
				s.StartTLS()
			})
			var reqs []h2.Request
			for _, r := range mixOf.reqs(srv.URL) {
				reqs = append(reqs, h2.Request(r))
			}
			d, err := h2.NewDialer(h2.Config{URL: srv.URL, Headers: []string{"X-All: 1"}, Streams: 4, TLS: protocol.TLS{Insecure: true}, Requests: reqs})
			if err != nil {
				t.Fatal(err)
			}
			cfg := conf(2, time.Minute)
			cfg.Streams, cfg.Requests = 4, 600
			driver = drv
			defer func() { driver = loadgen.DriverAuto }()
			r := mixRun(t, cfg, d)
			checkMix(t, r, srv, true)
		})
	}
}

// A Dialer whose connections send one request cannot carry a mix: the
// run is refused before any load.
func TestMixRefused(t *testing.T) {
	srv := newPathServer(t, startBoth)
	d, err := http1.NewDialer(http1.Config{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	cfg := conf(1, time.Second)
	cfg.Threads = 1
	cfg.Mix = &loadgen.Mix{Weights: []int{1}, Names: []string{"a", "b"}}
	if _, err := loadgen.Run(context.Background(), cfg, d); err == nil || !strings.Contains(err.Error(), "1 weights and 2 names") {
		t.Errorf("names and weights that do not match: %v", err)
	}
	cfg.Mix = &loadgen.Mix{Weights: []int{1}, Names: []string{"a"}}
	d, _ = http1.NewDialer(http1.Config{URL: srv.URL})
	_, err = loadgen.Run(context.Background(), cfg, wrapped{d})
	if err == nil || !strings.Contains(err.Error(), "a request mix needs HTTP/1.1 or HTTP/2") {
		t.Errorf("a protocol without picks: %v", err)
	}
	if seen, _ := srv.counts(); len(seen) != 0 {
		t.Errorf("load was sent: %v", seen)
	}
}

// wrapped is a Dialer whose Conns only Do.
type wrapped struct{ d protocol.Dialer }

func (w wrapped) Dial(ctx context.Context) (protocol.Conn, error) {
	c, err := w.d.Dial(ctx)
	if err != nil {
		return nil, err
	}
	return onlyDo{c}, nil
}

type onlyDo struct{ protocol.Conn }
