package loadgen_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"loadgen/internal/race"
	"loadgen/internal/ratecheck"
	"loadgen/loadgen"
	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2"
	"loadgen/loadgen/protocol/http1"
	"loadgen/results"
)

// countingServer is a real HTTP server on loopback that counts the
// requests it answered and answers each after delay().
type countingServer struct {
	*httptest.Server
	served atomic.Int64

	mu    sync.Mutex
	slept []time.Duration // how long each delayed request really waited
}

// sleptP50 is the median time the server's delay really took: its timer
// wakes late, more so on a loaded machine.
func (s *countingServer) sleptP50() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.slept) == 0 {
		return 0
	}
	xs := slices.Clone(s.slept)
	slices.Sort(xs)
	return xs[len(xs)/2]
}

func newServer(t *testing.T, delay func(n int64) time.Duration) *countingServer {
	t.Helper()
	s := &countingServer{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := s.served.Add(1)
		if delay != nil {
			if d := delay(n); d > 0 {
				t0 := time.Now()
				select {
				case <-time.After(d):
				case <-r.Context().Done():
				}
				s.mu.Lock()
				s.slept = append(s.slept, time.Since(t0))
				s.mu.Unlock()
			}
		}
		w.Write([]byte("hello"))
	}))
	startBoth(s.Server)
	t.Cleanup(s.Close)
	return s
}

// startBoth starts s serving HTTP/1.1 and h2c with prior knowledge on the
// same port (for the h2c variants of forDrivers).
// Over TLS (the tls variants) it serves HTTP/1.1 only.
func startBoth(s *httptest.Server) {
	s.Config.Protocols = new(http.Protocols)
	s.Config.Protocols.SetHTTP1(true)
	if overTLS {
		s.StartTLS()
		return
	}
	s.Config.Protocols.SetUnencryptedHTTP2(true)
	s.Start()
}

// dialer is the protocol of the tests of the moment: HTTP/1.1, or h2c
// (forDrivers).
func dialer(t *testing.T, url string) protocol.Dialer {
	t.Helper()
	if h2c {
		d, err := h2.NewDialer(h2.Config{URL: url, Cleartext: true})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	var tc protocol.TLS
	if overTLS {
		tc.Insecure = true
	}
	d, err := http1.NewDialer(http1.Config{URL: url, TLS: tc})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func run(t *testing.T, cfg loadgen.Config, url string) *results.Run {
	t.Helper()
	r, err := tryRun(t, cfg, url)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func tryRun(t *testing.T, cfg loadgen.Config, url string) (*results.Run, error) {
	t.Helper()
	cfg.Target = url
	if cfg.Threads == 0 {
		cfg.Threads = 1
	}
	cfg.Driver = driver
	if overTLS && cfg.NewConn && driver == loadgen.DriverLoop {
		t.Skip("--new-conn over TLS runs on goroutines: the tls/goroutines variant runs it")
	}
	r, err := loadgen.Run(context.Background(), cfg, dialer(t, url))
	if err != nil {
		return nil, err
	}
	if driver != loadgen.DriverAuto && r.Config.Driver != driver {
		t.Fatalf("run by %q, asked %q", r.Config.Driver, driver)
	}
	return r, nil
}

// driver is the driver the tests of the moment run on, h2c whether they
// speak h2c rather than HTTP/1.1, overTLS whether HTTP/1.1 over TLS
// (forDrivers).
var (
	driver  = loadgen.DriverAuto
	h2c     bool
	overTLS bool // HTTP/1.1 over TLS
	keepsP  bool // the loop keeps its P while it waits (not the runtime-wait variant)
)

// forDrivers runs a test on both drivers: the event loop and goroutines
// must keep the same rules. The loop runs twice: with a P to spare, so that
// a one-thread run's loop waits holding its P (as in the CLI), and waiting
// the runtime's way, as when no P is left to spare.
//
// Then both drivers run it in h2c (one stream per connection: the tests of
// package h2 run the engine with many), where the loop drives the
// connections as multiplexed ones: the same rules for every protocol.
// And in HTTP/1.1 over TLS, which the loop drives as a one-stream
// multiplexed connection opened in a goroutine (its handshake is
// crypto/tls's). forDriversH1 leaves h2c out, for tests of what only
// HTTP/1.1 does.
func forDrivers(t *testing.T, test func(t *testing.T)) {
	forVariants(t, true, true, test)
}

func forDriversH1(t *testing.T, test func(t *testing.T)) {
	forVariants(t, false, true, test)
}

// forDriversPlain leaves TLS out, for tests whose timeouts are shorter
// than a TLS handshake (the timeout bounds the connect too), or whose
// timeouts would each cost one (a timed-out HTTP/1.1 request takes its
// connection).
func forDriversPlain(t *testing.T, test func(t *testing.T)) {
	forVariants(t, true, false, test)
}

func forVariants(t *testing.T, withH2C, withTLS bool, test func(t *testing.T)) {
	for _, v := range []struct {
		name, driver   string
		hold, h2c, tls bool
	}{
		{loadgen.DriverLoop, loadgen.DriverLoop, true, false, false},
		{loadgen.DriverLoop + "/runtime-wait", loadgen.DriverLoop, false, false, false},
		{loadgen.DriverGoroutines, loadgen.DriverGoroutines, false, false, false},
		{"h2c/" + loadgen.DriverLoop, loadgen.DriverLoop, true, true, false},
		{"h2c/" + loadgen.DriverGoroutines, loadgen.DriverGoroutines, false, true, false},
		{"tls/" + loadgen.DriverLoop, loadgen.DriverLoop, true, false, true},
		{"tls/" + loadgen.DriverGoroutines, loadgen.DriverGoroutines, false, false, true},
	} {
		if v.h2c && !withH2C || v.tls && !withTLS {
			continue
		}
		if v.tls && testing.Short() {
			// A handshake per connection: the full run (make test) has
			// them; the short one under -race leaves them to the race
			// tests of the TLS layer (packages protocol, h2, rpc).
			continue
		}
		t.Run(v.name, func(t *testing.T) {
			driver, h2c, overTLS, keepsP = v.driver, v.h2c, v.tls, v.hold
			defer func() { driver, h2c, overTLS, keepsP = loadgen.DriverAuto, false, false, false }()
			switch {
			case v.hold && (v.h2c || v.tls):
				// As the CLI gives a loop a P of its own: holding one of
				// two would leave the in-process HTTP/2 server one, too
				// few under -race to answer on time.
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), runtime.NumCPU()) + 1))
			case v.hold && runtime.GOMAXPROCS(0) < 2:
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
			case !v.hold && v.driver == loadgen.DriverLoop:
				defer loadgen.WithoutHeldPs()()
			}
			test(t)
		})
	}
}

func conf(c int, d time.Duration) loadgen.Config {
	var cfg loadgen.Config
	cfg.Connections, cfg.Duration = c, results.Duration(d)
	return cfg
}

func TestClosedLoopCountsMatchServer(t *testing.T) {
	forDrivers(t, func(t *testing.T) {
		srv := newServer(t, nil)
		r := run(t, conf(4, 500*time.Millisecond), srv.URL)
		s := r.Summary
		if s.Requests == 0 || s.Requests != srv.served.Load() {
			t.Fatalf("generator counted %d requests, server served %d", s.Requests, srv.served.Load())
		}
		if s.Errors.Total() != 0 || s.Status[200] != s.Requests {
			t.Errorf("errors %+v, status %v", s.Errors, s.Status)
		}
		if s.Connections.Established != 4 {
			t.Errorf("%d connections established, want 4", s.Connections.Established)
		}
		if s.BytesRead <= 5*s.Requests {
			t.Errorf("%d bytes read for %d responses of 5-byte bodies plus headers", s.BytesRead, s.Requests)
		}
	})
}

func TestOpenLoopCountsMatchServer(t *testing.T) {
	forDrivers(t, func(t *testing.T) {
		srv := newServer(t, nil)
		cfg := conf(4, 500*time.Millisecond)
		cfg.Rate = 400
		r := run(t, cfg, srv.URL)
		s := r.Summary
		if s.Requests != srv.served.Load() {
			t.Fatalf("generator counted %d requests, server served %d", s.Requests, srv.served.Load())
		}
		if s.Pacing == nil || s.Pacing.Sent != s.Requests || s.Uncorrected == nil {
			t.Fatalf("open loop result lacks pacing or uncorrected latency: %+v", s)
		}
	})
}

func TestRequestCount(t *testing.T) {
	forDrivers(t, func(t *testing.T) {
		srv := newServer(t, nil)
		var cfg loadgen.Config
		cfg.Connections, cfg.Requests = 3, 1000
		r := run(t, cfg, srv.URL)
		if r.Summary.Requests != 1000 || srv.served.Load() != 1000 {
			t.Fatalf("-n 1000: generator %d, server %d", r.Summary.Requests, srv.served.Load())
		}
	})
}

// TestRunCarriesLabels checks that the result names the run as it was asked.
func TestRunCarriesLabels(t *testing.T) {
	srv := newServer(t, nil)
	var cfg loadgen.Config
	cfg.Connections, cfg.Requests = 1, 10
	cfg.Labels = results.Labels{"mesh": "istio", "build": "42"}
	r := run(t, cfg, srv.URL)
	if !r.Labels.Equal(cfg.Labels) {
		t.Fatalf("labels %v, want %v", r.Labels, cfg.Labels)
	}
}

// At c10 against a 10 ms delay, the generator must agree with the target's
// own timer: p50 in 10–11.5 ms, and RPS within 5% of connections ÷ mean.
func TestDelayLatencyAndLittlesLaw(t *testing.T) {
	forDrivers(t, func(t *testing.T) {
		srv := newServer(t, func(int64) time.Duration { return 10 * time.Millisecond })
		r := run(t, conf(10, 2*time.Second), srv.URL)
		s := r.Summary
		// 10–11.5 ms, as the docs say: the server's timer, loaded as this
		// machine is (helpers' tests side by side on two CPUs), wakes
		// 0.3–1 ms late, and the generator adds 0.1–0.5 ms of its own
		// (p50 10.36–11.13 ms over 35 runs of every driver). Under -race
		// the in-process server's own path (HTTP/2's frames through
		// several goroutines) takes about a millisecond more per request
		// than its timer, on every driver (measured: +0.8 to +1.4 ms; CI's
		// race pass saw 11.51 ms): there the generator must agree with the
		// server's own sleep, within 3 ms of it.
		lo, hi := 10*time.Millisecond, 11500*time.Microsecond
		if race.Enabled {
			hi = max(hi, srv.sleptP50()+3*time.Millisecond)
		}
		if p50 := s.Latency.P50.D(); p50 < lo || p50 > hi {
			t.Errorf("p50 %v, want %v–%v (the server's own sleep: %v)", p50, lo, hi, srv.sleptP50())
		}
		want := 10 / s.Latency.Mean.D().Seconds()
		if dev := s.RPS/want - 1; dev < -0.05 || dev > 0.05 {
			t.Errorf("RPS %.1f, connections/mean latency %.1f: off by %.1f%%", s.RPS, want, 100*dev)
		}
	})
}

func TestTimeoutShorterThanDelay(t *testing.T) {
	forDrivers(t, func(t *testing.T) {
		srv := newServer(t, func(int64) time.Duration { return 2 * time.Second })
		cfg := conf(2, 600*time.Millisecond)
		cfg.Timeout = results.Duration(100 * time.Millisecond)
		r := run(t, cfg, srv.URL)
		s := r.Summary
		if s.Requests != 0 {
			t.Errorf("%d responses, want none", s.Requests)
		}
		if s.Errors.Timeout == 0 || s.Errors.Total() != s.Errors.Timeout {
			t.Errorf("errors %+v, want only timeouts", s.Errors)
		}
		// HTTP/1.1: each timed-out request closed its connection (its
		// state is unknown) and a new one was opened. h2c: the stream is
		// reset, the connection is sound (the loop keeps it; goroutines
		// close a connection with its last stream).
		if !h2c && s.Connections.Established < s.Errors.Timeout {
			t.Errorf("%d connections for %d timeouts: timed-out connections must be replaced", s.Connections.Established, s.Errors.Timeout)
		}
		// Either way the server was told, and stopped working on them.
		if slept := srv.sleptP50(); slept > time.Second {
			t.Errorf("the server's handlers waited %v (median): the timed-out requests were not cancelled", slept)
		}
	})
}

// The test of the coordinated-omission correction. One connection, 200
// requests/s for 4 s (a request every 5 ms) against a target that answers
// at once but stalls 500 ms once, at 1 s. Theory: the stalled request takes
// 500 ms; the 99 requests scheduled during the stall wait for it, so the
// corrected latencies are ≈ 495, 490, … 5 ms. Of ~800 requests the top 1%
// (8) are all ≥ 460 ms, so the corrected p99 is ≈ 460 ms and ≈ 80 requests
// are above 100 ms. Uncorrected, only one request was slow: p99 is tiny.
func TestCoordinatedOmissionCorrection(t *testing.T) {
	forDrivers(t, func(t *testing.T) {
		const stallAt = 200 // the 200th request, at ≈ 1 s
		srv := newServer(t, func(n int64) time.Duration {
			if n == stallAt {
				return 500 * time.Millisecond
			}
			return 0
		})
		cfg := conf(1, 4*time.Second)
		cfg.Rate = 200
		probe := ratecheck.StartProbe()
		r := run(t, cfg, srv.URL)
		stalled := probe.Stop()
		s := r.Summary
		// Every request sent was answered, and ≈ 800 were sent: the ones
		// queued behind the stall go late, not missing. Only a stall at
		// the window's very end (a busy machine) leaves some unsent, up to
		// the intervals the run's max lag spans (TestOpenLoopRate); the
		// max lag here includes the designed stall's, so this bounds the
		// count loosely, and the checks below, relative to what was
		// counted, carry the test.
		lag, err := ratecheck.Short(s.Pacing, 200, 0, 700*time.Millisecond+stalled)
		if err != nil {
			t.Fatal(err)
		}
		if s.Requests != s.Pacing.Sent || s.Requests < 780-lag || s.Requests > 801 {
			t.Fatalf("%d requests, %d sent, want ≈ 800 (the max lag %v accounts for %d fewer)", s.Requests, s.Pacing.Sent, s.Pacing.MaxLag.D(), lag)
		}
		// The stall is the slow request's own latency: 500 ms asked of the
		// target, more when a busy machine wakes the target or the loop
		// late (CI once gave ≈ 560 ms). The requests queued behind it at
		// 5 ms intervals have corrected latencies stall − 5k, so the 8th
		// largest of 800 (p99) is ≈ stall − 35 ms: theory ≈ 460 ms for
		// the 500 ms asked, and bounds relative to the stall measured.
		stall := s.Uncorrected.Max.D()
		if stall < 500*time.Millisecond || stall > 700*time.Millisecond {
			t.Fatalf("uncorrected max %v, want the 500 ms stall", stall)
		}
		if p99 := s.Latency.P99.D(); p99 < stall-80*time.Millisecond || p99 > stall+5*time.Millisecond {
			t.Errorf("corrected p99 %v for a %v stall, theory ≈ stall − 35 ms", p99, stall)
		}
		if mx := s.Latency.Max.D(); mx < stall || mx > stall+100*time.Millisecond {
			t.Errorf("corrected max %v, want ≈ the %v stall", mx, stall)
		}
		if p99 := s.Uncorrected.P99.D(); p99 > 50*time.Millisecond {
			t.Errorf("uncorrected p99 %v: only one request was slow", p99)
		}
		// ≈ (stall − 100 ms)/5 ms corrected latencies above 100 ms (80 for
		// a 500 ms stall). A busy machine's own stalls (a CI neighbour)
		// can only add to them: by a few dozen, or, where it kept the
		// generator off the CPU for longer, by as many as it made late
		// beyond the ≈ stall/5 ms queued behind the target's stall (a
		// request above 100 ms that was not sent late had a slow answer,
		// which the uncorrected p99 above bounds). A correction from the
		// wrong origin would put hundreds there, none of them late.
		want := float64(stall-100*time.Millisecond) / float64(5*time.Millisecond)
		extra := max(0, float64(s.Pacing.Late)-float64(stall/(5*time.Millisecond)))
		above := float64(s.Requests) * (1 - quantileOf(t, r, 100*time.Millisecond))
		if above < want-10 || above > want+40+extra {
			t.Errorf("%.0f requests above 100 ms, theory ≈ %.0f for a %v stall (%d sends late, %.0f of them beyond the stall's)", above, want, stall, s.Pacing.Late, extra)
		}
		if s.Pacing.Late < 90 {
			t.Errorf("%d late sends, want the ≈ 99 queued behind the stall", s.Pacing.Late)
		}
	})
}

func TestOpenLoopRate(t *testing.T) {
	forDrivers(t, func(t *testing.T) {
		srv := newServer(t, nil)
		cfg := conf(8, 3*time.Second)
		cfg.Rate = 2000
		probe := ratecheck.StartProbe()
		r := run(t, cfg, srv.URL)
		stalled := probe.Stop()
		p := r.Summary.Pacing
		// An event loop says how late a send could be to share a
		// wake-up (Config.Slack); goroutines wake at each send.
		if want := map[bool]time.Duration{true: loadgen.DefaultSlack}[r.Config.Driver == loadgen.DriverLoop]; p.Slack.D() != want {
			t.Errorf("slack %v on %s, want %v", p.Slack.D(), r.Config.Driver, want)
		}
		// None should be left. A generator late at the window's end (a busy
		// machine: CI runs packages side by side on two CPUs) still sends
		// what was due to the connections free then (8 here), late by the
		// stall, so only a stall of more than 8 intervals at the very end
		// leaves any, and then no more than the stall (the run's max lag)
		// spans intervals. Requests left without a lag to show for it are
		// the engine's fault; those the lag accounts for are missing from
		// the rate and the count too (CI once stalled ≈ 100 ms at the end).
		allowed, err := ratecheck.Short(p, 2000, 6, stalled)
		if err != nil {
			t.Fatal(err)
		}
		if p.Unsent > allowed {
			t.Errorf("%d requests never sent against an idle target; the max lag, %v, accounts for %d", p.Unsent, p.MaxLag.D(), allowed)
		}
		// Within 2% (the docs' claim), as the requests counted: a stall
		// shorter than 2% of the run (120 sends) widens neither.
		if err := ratecheck.Achieved(p, 2000, 3*time.Second, 0.02, 6, stalled); err != nil {
			t.Error(err)
		}
		if n := r.Summary.Requests; n < 6000-max(120, allowed) || n > 6001 {
			t.Errorf("%d requests in 3 s at 2000/s, want within 2%% of 6000 (the max lag %v spans %d sends)", n, p.MaxLag.D(), allowed)
		}
	})
}

func TestWarmupExcluded(t *testing.T) {
	forDrivers(t, func(t *testing.T) {
		srv := newServer(t, nil)
		var cfg loadgen.Config
		cfg.Connections, cfg.Duration, cfg.Warmup = 2, results.Duration(300*time.Millisecond), results.Duration(300*time.Millisecond)
		cfg.Rate = 100
		probe := ratecheck.StartProbe()
		r := run(t, cfg, srv.URL)
		stalled := probe.Stop()
		// 100/s: ≈ 30 in warm-up, ≈ 30 measured; the server saw both. A
		// stall at the window's end (a busy machine) leaves up to the
		// intervals its max lag spans unsent (TestOpenLoopRate).
		lag, err := ratecheck.Short(r.Summary.Pacing, 100, 0, stalled)
		if err != nil {
			t.Fatal(err)
		}
		if n := r.Summary.Requests; n < 27-lag || n > 31 {
			t.Errorf("%d measured requests, want ≈ 30 (the max lag %v accounts for %d fewer)", n, r.Summary.Pacing.MaxLag.D(), lag)
		}
		if srv.served.Load() < r.Summary.Requests+25 {
			t.Errorf("server served %d, generator measured %d: warm-up requests were not sent", srv.served.Load(), r.Summary.Requests)
		}
	})
}

// TestNewConnCountsTheWindow checks that with a new connection per request,
// the connections opened in the measured window match its requests (each
// worker may have dialed one in warm-up for a request that starts after it),
// and the warm-up's are counted as established but not as measured: as many
// as the server accepted before the window began, give or take those dials.
// Held to the server's count, not to the window's rate: a busy machine can
// let the warm-up make fewer than a quarter of the window's.
func TestNewConnCountsTheWindow(t *testing.T) {
	forDriversH1(t, func(t *testing.T) {
		var mu sync.Mutex
		var accepted []time.Time
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("hello"))
		}))
		srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				mu.Lock()
				accepted = append(accepted, time.Now())
				mu.Unlock()
			}
		}
		startBoth(srv)
		defer srv.Close()
		var cfg loadgen.Config
		cfg.Connections, cfg.Duration, cfg.Warmup = 2, results.Duration(300*time.Millisecond), results.Duration(300*time.Millisecond)
		cfg.NewConn = true
		var measure time.Time
		cfg.Window = func(from, _ time.Time) { measure = from }
		r := run(t, cfg, srv.URL)
		c, n := r.Summary.Connections, r.Summary.Requests
		if n == 0 || c.Measured < n-2 || c.Measured > n+2 {
			t.Errorf("%d connections opened in the window for %d requests", c.Measured, n)
		}
		mu.Lock()
		before := 0
		for _, at := range accepted {
			if at.Before(measure) {
				before++
			}
		}
		mu.Unlock()
		before-- // the preflight's, which the run does not count
		if before < 1 {
			t.Fatalf("the server accepted no connection in the warm-up: nothing to count")
		}
		// Each worker may have dialed one more before the window that the
		// server accepted in it.
		if warm := c.Established - c.Measured; warm < int64(before)-c.Failed || warm > int64(before+cfg.Connections) {
			t.Errorf("%d established in all, %d in the window: %d in the warm-up, the server accepted %d then (%d failed)",
				c.Established, c.Measured, warm, before, c.Failed)
		}
	})
}

// TestNewConnEveryRequestConnects checks that with no warm-up, every request
// of a --new-conn run opened its own connection in the window, the first one
// too (the preflight's connection is not reused: its handshake would be
// missing from that request's latency), on either driver.
func TestNewConnEveryRequestConnects(t *testing.T) {
	forDriversH1(t, func(t *testing.T) {
		srv := newServer(t, nil)
		var cfg loadgen.Config
		cfg.Connections, cfg.Duration = 2, results.Duration(300*time.Millisecond)
		cfg.NewConn = true
		r := run(t, cfg, srv.URL)
		c, n := r.Summary.Connections, r.Summary.Requests
		if n == 0 || c.Measured != n || c.Established != n || c.Failed != 0 {
			t.Errorf("connections %+v for %d requests: want one opened in the window per request", c, n)
		}
		if r.Summary.Connect == nil || r.Summary.Connect.Count != n {
			t.Errorf("connect histogram %+v for %d requests", r.Summary.Connect, n)
		}
	})
}

func TestConnectionRefusedDuringRunIsCounted(t *testing.T) {
	forDrivers(t, func(t *testing.T) {
		srv := newServer(t, nil)
		ln := srv.Listener
		cfg := conf(2, time.Second)
		go func() {
			// After 100 answers, not after a time: on a busy machine a
			// timer could fire after the run's last second.
			for end := time.Now().Add(10 * time.Second); srv.served.Load() < 100 && time.Now().Before(end); {
				time.Sleep(5 * time.Millisecond)
			}
			srv.CloseClientConnections()
			ln.Close() // the port now refuses
			srv.CloseClientConnections()
		}()
		r := run(t, cfg, srv.URL)
		s := r.Summary
		if s.Requests == 0 || s.Errors.Connect == 0 {
			t.Errorf("requests %d, connect errors %d: want both", s.Requests, s.Errors.Connect)
		}
		if s.Connections.Failed == 0 {
			t.Errorf("no failed connection counted")
		}
	})
}

func TestUnreachableTargetFailsBeforeLoad(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String() + "/"
	ln.Close()
	cfg := conf(1, time.Second)
	cfg.Target = url
	cfg.Threads = 1
	cfg.Driver = driver
	if _, err := loadgen.Run(context.Background(), cfg, dialer(t, url)); err == nil {
		t.Fatal("want an error for a closed port")
	}
}

func TestInterruptKeepsResults(t *testing.T) {
	forDrivers(t, func(t *testing.T) {
		srv := newServer(t, func(int64) time.Duration { return time.Millisecond })
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// Ctrl-C mid-run: once the server has answered 100 requests, not
		// 400 ms after the test starts, which a busy machine's slow start
		// (TLS handshakes under -race) could reach before any was answered.
		go func() {
			for end := time.Now().Add(10 * time.Second); srv.served.Load() < 100 && time.Now().Before(end); {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
		cfg := conf(2, time.Minute)
		cfg.Target, cfg.Threads, cfg.Driver = srv.URL, 1, driver
		r, err := loadgen.Run(ctx, cfg, dialer(t, srv.URL))
		if err != nil {
			t.Fatal(err)
		}
		if !r.Interrupted || r.Summary.Requests == 0 {
			t.Fatalf("interrupted %v with %d requests", r.Interrupted, r.Summary.Requests)
		}
		if d := r.Summary.Duration.D(); d > 10*time.Second {
			t.Errorf("window %v: the run did not stop on cancel", d)
		}
	})
}

func TestValidate(t *testing.T) {
	for name, mut := range map[string]func(*loadgen.Config){
		"no connections":       func(c *loadgen.Config) { c.Connections = 0 },
		"threads > conns":      func(c *loadgen.Config) { c.Threads = 5 },
		"negative rate":        func(c *loadgen.Config) { c.Rate = -5 },
		"no bound":             func(c *loadgen.Config) { c.Duration = 0 },
		"negative duration":    func(c *loadgen.Config) { c.Duration = -1 },
		"negative requests -n": func(c *loadgen.Config) { c.Requests = -1 },
		"slack over a second":  func(c *loadgen.Config) { c.Slack = 2 * time.Second },
	} {
		c := conf(2, time.Second)
		c.Threads = 1
		mut(&c)
		if err := c.Validate(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// stuckDialer connects once (the preflight), then every Dial hangs past
// the run, ignoring its context: workers that never get a connection.
type stuckDialer struct{ n atomic.Int32 }

type instantConn struct{}

func (instantConn) Do(context.Context, time.Time) protocol.Outcome {
	time.Sleep(time.Millisecond)
	return protocol.Outcome{Status: 200}
}
func (instantConn) Close() error { return nil }

func (d *stuckDialer) Dial(context.Context) (protocol.Conn, error) {
	if d.n.Add(1) == 1 {
		return instantConn{}, nil
	}
	time.Sleep(1500 * time.Millisecond)
	return nil, errors.New("too late")
}

// A closed-loop run whose workers could not all connect in time says how
// many never did, instead of reporting fewer connections silently.
func TestWorkersThatNeverConnectedAreReported(t *testing.T) {
	var cfg loadgen.Config
	cfg.Target = "stuck"
	cfg.Connections, cfg.Threads = 3, 1
	cfg.Duration, cfg.Timeout = results.Duration(200*time.Millisecond), results.Duration(100*time.Millisecond)
	r, err := loadgen.Run(context.Background(), cfg, &stuckDialer{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Summary.Requests == 0 || r.Summary.Connections.Established != 1 {
		t.Errorf("%d requests on %d connections, want some on 1", r.Summary.Requests, r.Summary.Connections.Established)
	}
	if !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.HasPrefix(n, "2 of 3 workers never had a connection") }) {
		t.Errorf("notes %q lack the 2 workers that never connected", r.Notes)
	}
}

// TestOpenLoopRateCatchesSlowSends runs the open loop at twice what its
// connections can carry (8 connections, 8 ms a request: 1,000/s of the
// 2,000/s asked), so sends fall steadily behind as a slowed pacer's would:
// the rate checks of the tests above must fail it, whatever lag the engine
// reports (issue: an allowance of max lag / interval once excused all of it).
func TestOpenLoopRateCatchesSlowSends(t *testing.T) {
	srv := newServer(t, func(int64) time.Duration { return 8 * time.Millisecond })
	cfg := conf(8, time.Second)
	cfg.Rate = 2000
	cfg.Driver = loadgen.DriverGoroutines
	r := run(t, cfg, srv.URL)
	p := r.Summary.Pacing
	if n, err := ratecheck.Short(p, 2000, 6, 0); err == nil {
		t.Fatalf("a run that sent %d of 2,000 (max lag %v, %d late) passed the rate checks, excusing %d", p.Sent, p.MaxLag.D(), p.Late, n)
	}
}

// resolvingDialer records when the engine looks its target up.
type resolvingDialer struct {
	stuckDialer
	resolved  int
	dialsThen int32         // Dials made before the lookup
	bound     time.Duration // what was left of the lookup's context
	err       error
}

func (d *resolvingDialer) Resolve(ctx context.Context) error {
	d.resolved++
	d.dialsThen = d.n.Load()
	if dl, ok := ctx.Deadline(); ok {
		d.bound = time.Until(dl)
	}
	return d.err
}

// The target's name is looked up once, before the first connect, within
// a bound of its own (ResolveTimeout), not the 2 s of a request's timeout:
// a cluster's DNS that is slow for a while does not fail the run.
func TestRunResolvesBeforeConnecting(t *testing.T) {
	var cfg loadgen.Config
	cfg.Target = "resolving"
	cfg.Connections, cfg.Threads = 1, 1
	cfg.Duration, cfg.Timeout = results.Duration(50*time.Millisecond), results.Duration(100*time.Millisecond)
	d := &resolvingDialer{}
	if _, err := loadgen.Run(context.Background(), cfg, d); err != nil {
		t.Fatal(err)
	}
	if d.resolved != 1 || d.dialsThen != 0 {
		t.Fatalf("looked up %d times, after %d dials; want once, before any", d.resolved, d.dialsThen)
	}
	if d.bound < loadgen.ResolveTimeout-5*time.Second {
		t.Fatalf("the lookup's bound was %v, want about %v", d.bound, loadgen.ResolveTimeout)
	}
	d = &resolvingDialer{err: errors.New("lookup resolving: no such host")}
	_, err := loadgen.Run(context.Background(), cfg, d)
	if err == nil || !strings.Contains(err.Error(), "cannot connect to resolving: lookup resolving: no such host") || d.n.Load() != 0 {
		t.Fatalf("a failed lookup: %v after %d dials; want the run refused before any", err, d.n.Load())
	}
}
