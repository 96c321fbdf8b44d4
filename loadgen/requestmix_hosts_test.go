package loadgen_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"loadgen/internal/testport"
	"loadgen/loadgen"
	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2"
	"loadgen/loadgen/protocol/http1"
	"loadgen/results"
)

// hostServer is a real HTTP server on one loopback address (h2c too)
// that counts the requests it answered by path.
type hostServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen map[string]int64
}

func newHostServer(t *testing.T, ln net.Listener) *hostServer {
	t.Helper()
	s := &hostServer{seen: map[string]int64{}}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen[r.URL.Path]++
		s.mu.Unlock()
		w.Write([]byte("hello"))
	}))
	s.Listener.Close()
	s.Listener = ln
	s.Config.Protocols = new(http.Protocols)
	s.Config.Protocols.SetHTTP1(true)
	s.Config.Protocols.SetUnencryptedHTTP2(true)
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func (s *hostServer) count(path string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen[path]
}

func listen(t *testing.T, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// hostMix is the tests' mix on two hosts: /a1 (weight 1) and /a2
// (weight 2) on the first, /b (weight 3) on the second.
var hostMix = struct {
	names   []string
	weights []int
	hosts   []int
}{[]string{"a1", "a2", "b"}, []int{1, 2, 3}, []int{0, 0, 1}}

// hostsDialer is the mix's HostDialer over bases (the two hosts' URLs),
// on HTTP/1.1 or h2c.
func hostsDialer(t *testing.T, h2c bool, bases ...string) protocol.HostDialer {
	t.Helper()
	paths := [][]string{{"/a1", "/a2"}, {"/b"}}
	var ds []protocol.Dialer
	for h, base := range bases {
		var d protocol.Dialer
		var err error
		if h2c {
			var reqs []h2.Request
			for _, p := range paths[h] {
				reqs = append(reqs, h2.Request{Method: "GET", URL: base + p})
			}
			d, err = h2.NewDialer(h2.Config{URL: base, Cleartext: true, Requests: reqs})
		} else {
			var reqs []http1.Request
			for _, p := range paths[h] {
				reqs = append(reqs, http1.Request{Method: "GET", URL: base + p})
			}
			d, err = http1.NewDialer(http1.Config{URL: base, Requests: reqs})
		}
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	hd, err := protocol.NewHosts(bases, ds)
	if err != nil {
		t.Fatal(err)
	}
	return hd
}

func hostsRun(t *testing.T, cfg loadgen.Config, d protocol.Dialer) (*results.Run, error) {
	t.Helper()
	cfg.Mix = &loadgen.Mix{Weights: hostMix.weights, Names: hostMix.names, Hosts: hostMix.hosts}
	cfg.Threads = 1
	return loadgen.Run(context.Background(), cfg, d)
}

// A mix on two hosts (127.0.0.1 and 127.0.0.2): each server gets its own
// requests only, in the mix's shares, exactly over -n requests, closed
// and open loop, on HTTP/1.1 and h2c; the connections are split by the
// hosts' weights; the figures by host say what each server counted. The
// event loop drives one host: the engine runs the mix on goroutines and
// says so, and refuses --driver loop.
func TestMixHosts(t *testing.T) {
	for _, h2c := range []bool{false, true} {
		for _, open := range []bool{false, true} {
			name := map[bool]string{false: "http1", true: "h2c"}[h2c] + map[bool]string{false: "/closed", true: "/open"}[open]
			t.Run(name, func(t *testing.T) {
				a, b := newHostServer(t, listen(t, "127.0.0.1:0")), newHostServer(t, listen(t, "127.0.0.2:0"))
				cfg := loadgen.Config{}
				cfg.Connections, cfg.Requests, cfg.Timeout = 5, 600, results.Duration(5*time.Second)
				if open {
					cfg.Rate = 6000
				}
				r, err := hostsRun(t, cfg, hostsDialer(t, h2c, a.URL, b.URL))
				if err != nil {
					t.Fatal(err)
				}
				// 600 requests, a round of 6 (a1, a2 a2, b b b): 100, 200, 300.
				for _, c := range []struct {
					srv  *hostServer
					path string
					want int64
				}{{a, "/a1", 100}, {a, "/a2", 200}, {a, "/b", 0}, {b, "/b", 300}, {b, "/a1", 0}, {b, "/a2", 0}} {
					if got := c.srv.count(c.path); got != c.want {
						t.Errorf("%s got %d of %s, want %d", c.srv.URL, got, c.path, c.want)
					}
				}
				if r.Summary.Requests != 600 || r.Summary.Errors.Total() != 0 {
					t.Errorf("%d requests, %d errors; want 600, 0", r.Summary.Requests, r.Summary.Errors.Total())
				}
				if r.Config.Driver != loadgen.DriverGoroutines {
					t.Errorf("driven by %q, want goroutines", r.Config.Driver)
				}
				if !hasNote(r, "the request mix goes to 2 hosts: it ran on goroutines") {
					t.Errorf("no note of the driver: %q", r.Notes)
				}
				byName := map[string]int64{}
				for _, nr := range r.RequestsByName {
					byName[nr.Name] = nr.Requests
				}
				if byName["a1"] != 100 || byName["a2"] != 200 || byName["b"] != 300 {
					t.Errorf("by name %v, want a1 100, a2 200, b 300", byName)
				}
				hosts := r.RequestsByHost
				if len(hosts) != 2 {
					t.Fatalf("%d hosts in the figures, want 2", len(hosts))
				}
				// 5 connections: one each, and 3 more by weight 3:3 — 1.5
				// each, the remainder to the first.
				for i, want := range []struct {
					name     string
					requests int64
					conns    int
				}{{a.URL, 300, 3}, {b.URL, 300, 2}} {
					h := hosts[i]
					if h.Name != want.name || h.Requests != want.requests || h.Connections != want.conns || h.Latency.Count != want.requests || h.Share != 0.5 {
						t.Errorf("host %d: %s, %d requests (%d timed, share %.2f), %d connections; want %s, %d, %d, 0.5",
							i+1, h.Name, h.Requests, h.Latency.Count, h.Share, h.Connections, want.name, want.requests, want.conns)
					}
				}
			})
		}
	}
	// The second host weighs more: its connections come first in the
	// deal, yet the run's first connection (its check before the run)
	// is the first host's, and stays with it.
	t.Run("heavier second host", func(t *testing.T) {
		a, b := newHostServer(t, listen(t, "127.0.0.1:0")), newHostServer(t, listen(t, "127.0.0.2:0"))
		cfg := loadgen.Config{}
		cfg.Connections, cfg.Requests, cfg.Threads = 5, 600, 1
		cfg.Mix = &loadgen.Mix{Weights: []int{1, 1, 4}, Names: hostMix.names, Hosts: hostMix.hosts}
		r, err := loadgen.Run(context.Background(), cfg, hostsDialer(t, false, a.URL, b.URL))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			srv  *hostServer
			path string
			want int64
		}{{a, "/a1", 100}, {a, "/a2", 100}, {b, "/b", 400}, {a, "/b", 0}, {b, "/a1", 0}} {
			if got := c.srv.count(c.path); got != c.want {
				t.Errorf("%s got %d of %s, want %d", c.srv.URL, got, c.path, c.want)
			}
		}
		if h := r.RequestsByHost; len(h) != 2 || h[0].Connections != 2 || h[1].Connections != 3 {
			t.Errorf("connections by host %+v, want 2 and 3", h)
		}
	})
	t.Run("driver loop", func(t *testing.T) {
		a, b := newHostServer(t, listen(t, "127.0.0.1:0")), newHostServer(t, listen(t, "127.0.0.2:0"))
		cfg := loadgen.Config{}
		cfg.Connections, cfg.Requests, cfg.Driver = 2, 10, loadgen.DriverLoop
		_, err := hostsRun(t, cfg, hostsDialer(t, false, a.URL, b.URL))
		if err == nil || !strings.Contains(err.Error(), "--driver loop cannot drive a request mix on several hosts") {
			t.Errorf("--driver loop: %v, want that goroutines run it", err)
		}
	})
}

func hasNote(r *results.Run, prefix string) bool {
	for _, n := range r.Notes {
		if strings.HasPrefix(n, prefix) {
			return true
		}
	}
	return false
}

// A host that refuses connections: before the run, the run's error
// names it; during the run, its figures count its failed connects and
// no answers, while the other host's are whole.
func TestMixHostRefuses(t *testing.T) {
	t.Run("before", func(t *testing.T) {
		a := newHostServer(t, listen(t, "127.0.0.1:0"))
		closed := "http://" + strings.Replace(testport.Closed(t), "127.0.0.1", "127.0.0.2", 1)
		_, err := hostsRun(t, loadgen.Config{Config: results.Config{Connections: 2, Requests: 10}}, hostsDialer(t, false, a.URL, closed))
		want := "cannot connect to " + closed + " (host 2 of the request mix's 2)"
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want %s…", err, want)
		}
	})
	t.Run("during", func(t *testing.T) {
		a := newHostServer(t, listen(t, "127.0.0.1:0"))
		// The second host takes the run's first connection to it (the
		// check before the run), then stops listening.
		b := newHostServer(t, &acceptOnce{Listener: listen(t, "127.0.0.2:0")})
		cfg := loadgen.Config{}
		cfg.Connections, cfg.Duration, cfg.Timeout = 4, results.Duration(300*time.Millisecond), results.Duration(time.Second)
		r, err := hostsRun(t, cfg, hostsDialer(t, false, a.URL, b.URL))
		if err != nil {
			t.Fatal(err)
		}
		ha, hb := r.RequestsByHost[0], r.RequestsByHost[1]
		if ha.Requests == 0 || ha.Errors.Total() != 0 || ha.Requests != a.count("/a1")+a.count("/a2") {
			t.Errorf("%s: %d answered, %d errors; its server counted %d; want them answered, none failed", ha.Name, ha.Requests, ha.Errors.Total(), a.count("/a1")+a.count("/a2"))
		}
		if hb.Requests != 0 || hb.Errors.Connect == 0 {
			t.Errorf("%s: %d answered, errors %+v; want none answered, failed connects", hb.Name, hb.Requests, hb.Errors)
		}
		if r.Summary.Errors.Connect != hb.Errors.Connect {
			t.Errorf("the run counts %d failed connects, the hosts %d", r.Summary.Errors.Connect, hb.Errors.Connect)
		}
	})
}

// acceptOnce is a listener that closes itself once it accepted a
// connection.
type acceptOnce struct {
	net.Listener
	once sync.Once
}

func (l *acceptOnce) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.once.Do(func() { l.Listener.Close() })
	}
	return c, err
}

// The connections a mix on two hosts established are its -c: the check
// of each host before the run is not one of them.
func TestMixHostsConnections(t *testing.T) {
	for _, h2c := range []bool{false, true} {
		a, b := newHostServer(t, listen(t, "127.0.0.1:0")), newHostServer(t, listen(t, "127.0.0.2:0"))
		cfg := loadgen.Config{}
		cfg.Connections, cfg.Requests = 5, 100
		r, err := hostsRun(t, cfg, hostsDialer(t, h2c, a.URL, b.URL))
		if err != nil {
			t.Fatal(err)
		}
		if c := r.Summary.Connections; c.Established != 5 || c.Failed != 0 {
			t.Errorf("h2c %v: %d connections established, %d failed; want 5, 0", h2c, c.Established, c.Failed)
		}
	}
}

// HTTP/1.1 to one host in cleartext and to the other over TLS, in one
// run: each server answers its own requests.
func TestMixHostsTLS(t *testing.T) {
	a := newHostServer(t, listen(t, "127.0.0.1:0"))
	b := &hostServer{seen: map[string]int64{}}
	b.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		b.seen[r.URL.Path]++
		b.mu.Unlock()
		w.Write([]byte("hello"))
	}))
	b.Listener.Close()
	b.Listener = listen(t, "127.0.0.2:0")
	b.StartTLS()
	t.Cleanup(b.Close)
	da, err := http1.NewDialer(http1.Config{URL: a.URL, Requests: []http1.Request{{URL: a.URL + "/a1"}, {URL: a.URL + "/a2"}}})
	if err != nil {
		t.Fatal(err)
	}
	db, err := http1.NewDialer(http1.Config{URL: b.URL, TLS: protocol.TLS{Enabled: true, Insecure: true}, Requests: []http1.Request{{URL: b.URL + "/b"}}})
	if err != nil {
		t.Fatal(err)
	}
	hd, err := protocol.NewHosts([]string{a.URL, b.URL}, []protocol.Dialer{da, db})
	if err != nil {
		t.Fatal(err)
	}
	cfg := loadgen.Config{}
	cfg.Connections, cfg.Requests = 4, 600
	r, err := hostsRun(t, cfg, hd)
	if err != nil {
		t.Fatal(err)
	}
	if got := [3]int64{a.count("/a1"), a.count("/a2"), b.count("/b")}; got != [3]int64{100, 200, 300} || r.Summary.Errors.Total() != 0 {
		t.Errorf("the servers answered /a1, /a2, /b: %v, errors %+v; want 100, 200, 300, none", got, r.Summary.Errors)
	}
}
