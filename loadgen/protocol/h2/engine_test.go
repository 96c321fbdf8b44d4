package h2

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"loadgen/internal/ratecheck"
	"loadgen/loadgen"
	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2conn/h2peer"
	"loadgen/loadgen/protocol/h2wire"
	"loadgen/results"
	"loadgen/results/hist"
)

// The engine's runs of HTTP/2, h2c and over TLS, on both drivers: the
// event loop drives each connection as a multiplexed one (its streams on
// one socket, every stream's request in the flight list; over TLS, the
// connection opened in a goroutine, then its records through memory),
// goroutines a stream each. All must keep the same rules.

// variant is a driver and a transport.
type variant struct {
	driver string
	tls    bool
}

var engineVariants = []variant{
	{loadgen.DriverLoop, false}, {loadgen.DriverGoroutines, false},
	{loadgen.DriverLoop, true}, {loadgen.DriverGoroutines, true},
}

func (v variant) String() string {
	if v.tls {
		return "h2/" + v.driver
	}
	return "h2c/" + v.driver
}

// server is a net/http server of v's transport.
func (v variant) server(t *testing.T, h http.Handler) *testServer {
	if v.tls {
		return tlsServer(t, h, "h2")
	}
	return h2cServer(t, h, false, true)
}

// peer is a frame-level server of v's transport (h2peer.Start); it
// returns the URL to load.
func (v variant) peer(t *testing.T, settings []http2.Setting, serve func(p *peer)) string {
	if v.tls {
		cfg := &tls.Config{Certificates: []tls.Certificate{testCert(t).TLS}}
		return "https://" + h2peer.StartTLS(t, cfg, settings, serve) + "/"
	}
	return "http://" + startPeer(t, settings, serve) + "/"
}

// runEngine runs the engine against cfg.URL with -c lc.Connections -m
// cfg.Streams.
func runEngine(t *testing.T, v variant, cfg Config, lc loadgen.Config) *results.Run {
	t.Helper()
	lc.Protocol = "h2c"
	if v.tls {
		cfg.TLS.Insecure = true
		lc.Protocol = "h2"
	} else {
		cfg.Cleartext = true
	}
	d, err := NewDialer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	lc.Target, lc.Driver = cfg.URL, v.driver
	lc.Streams = cfg.Streams
	if lc.Threads == 0 {
		lc.Threads = 1
	}
	r, err := loadgen.Run(context.Background(), lc, d)
	if err != nil {
		t.Fatal(err)
	}
	if r.Config.Driver != v.driver {
		t.Fatalf("run by %q, asked %q", r.Config.Driver, v.driver)
	}
	return r
}

func engineConf(conns int, d time.Duration) loadgen.Config {
	var c loadgen.Config
	c.Connections, c.Duration = conns, results.Duration(d)
	return c
}

// Every stream of a connection is in flight at once (the server holds
// each request until -m are, and answers 503 if they never are), the
// generator counts what the server served, on -c connections.
func TestEngineMultiplexes(t *testing.T) {
	for _, v := range engineVariants {
		t.Run(v.String(), func(t *testing.T) {
			const conns, streams = 2, 8
			h := &inFlight{want: streams, n: map[string]int{}, max: map[string]int{}}
			h.cond = sync.NewCond(&h.mu)
			var served atomic.Int64
			s := v.server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				h.ServeHTTP(w, r)
				served.Add(1)
			}))
			r := runEngine(t, v, Config{URL: s.URL, Streams: streams}, engineConf(conns, 500*time.Millisecond))
			sm := r.Summary
			if sm.Requests < 100 || sm.Requests != served.Load() {
				t.Fatalf("generator counted %d, server served %d", sm.Requests, served.Load())
			}
			if sm.Errors.Total() != 0 || sm.Status[200] != sm.Requests {
				t.Errorf("errors %+v, status %v (503: the streams of a connection were not in flight at once)", sm.Errors, sm.Status)
			}
			if sm.Connections.Established != conns {
				t.Errorf("%d connections established, want %d", sm.Connections.Established, conns)
			}
			// The preflight's connection, then -c: closed before the run on
			// the loop, kept as the first worker's on goroutines.
			if got := s.ln.accepted.Load(); got < conns || got > conns+1 {
				t.Errorf("server accepted %d connections for -c %d", got, conns)
			}
			h.mu.Lock()
			for addr, m := range h.max {
				if m > streams {
					t.Errorf("%s: %d requests in flight, above -m %d", addr, m, streams)
				}
			}
			h.mu.Unlock()
		})
	}
}

// A server that allows fewer streams than -m (SETTINGS_MAX_CONCURRENT_STREAMS):
// the requests wait for a stream, none fails, none goes above the limit.
func TestEngineStreamLimit(t *testing.T) {
	for _, v := range engineVariants {
		t.Run(v.String(), func(t *testing.T) {
			const limit = 2
			var mu sync.Mutex
			n, most := 0, 0
			var served atomic.Int64
			s := v.server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				n++
				most = max(most, n)
				mu.Unlock()
				time.Sleep(time.Millisecond)
				mu.Lock()
				n--
				mu.Unlock()
				served.Add(1)
			}))
			s.srv.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: limit}
			r := runEngine(t, v, Config{URL: s.URL, Streams: 8}, engineConf(1, 500*time.Millisecond))
			sm := r.Summary
			if sm.Requests < 50 || sm.Requests != served.Load() || sm.Errors.Total() != 0 {
				t.Fatalf("%d requests (server %d), errors %+v", sm.Requests, served.Load(), sm.Errors)
			}
			mu.Lock()
			defer mu.Unlock()
			if most > limit {
				t.Errorf("%d requests in flight on a connection that allows %d", most, limit)
			}
		})
	}
}

// Requests past their timeout are timeouts, counted at it; their streams
// are reset (the server's handler sees its request cancelled), and the
// requests around them on the same connection are answered.
func TestEngineStreamTimeouts(t *testing.T) {
	for _, v := range engineVariants {
		t.Run(v.String(), func(t *testing.T) {
			var seen, cancelled, served atomic.Int64
			s := v.server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if seen.Add(1)%5 == 0 {
					select {
					case <-r.Context().Done():
						cancelled.Add(1)
						return
					case <-time.After(5 * time.Second):
					}
				}
				served.Add(1)
			}))
			// 200 ms, not less: the timeout bounds the connects too (the
			// preflight's, and on goroutines each new connection's: a
			// connection serves the -m Streams that opened it, and a
			// timed-out one rejoins on a new one, a dozen a run), and a busy
			// machine that holds this process through one fails it.
			const timeout = 200 * time.Millisecond
			lc := engineConf(1, 800*time.Millisecond)
			lc.Timeout = results.Duration(timeout)
			probe := ratecheck.StartProbe()
			r := runEngine(t, v, Config{URL: s.URL, Streams: 4}, lc)
			stalled := probe.Stop()
			sm := r.Summary
			// A connect fails only if the machine held this process for
			// half the timeout (the probe's independent figure); each is a
			// failed connect of the window too.
			connects := sm.Errors.Connect
			if excused := int64(stalled / (timeout / 2)); connects > excused || connects != sm.Connections.FailedMeasured {
				t.Errorf("errors %+v, %d connects failed in the window: at most %d excused (the machine stalled this process %v)",
					sm.Errors, sm.Connections.FailedMeasured, excused, stalled)
			}
			if sm.Requests < 20 || sm.Errors.Timeout < 5 || sm.Errors.Total() != sm.Errors.Timeout+connects {
				t.Fatalf("%d answered, errors %+v: want answers and timeouts only", sm.Requests, sm.Errors)
			}
			if mx := sm.Latency.Max.D(); mx < timeout || mx > timeout+10*time.Millisecond {
				t.Errorf("max %v: a timeout is counted at the %v timeout", mx, timeout)
			}
			eventually(t, "the server to see the timed-out requests cancelled", func() bool {
				return cancelled.Load() >= sm.Errors.Timeout
			})
			if v.driver == loadgen.DriverLoop && s.ln.accepted.Load() != 2 { // the preflight's, and the run's
				t.Errorf("%d connections: a reset stream must not cost its connection", s.ln.accepted.Load())
			}
		})
	}
}

// A request body larger than the server's flow-control windows goes out
// as the server's WINDOW_UPDATEs allow, whole, on every stream.
func TestEngineBodyFlowControl(t *testing.T) {
	body := make([]byte, 200<<10) // > the default 64 KiB windows
	for i := range body {
		body[i] = byte(i)
	}
	for _, v := range engineVariants {
		t.Run(v.String(), func(t *testing.T) {
			var whole, short atomic.Int64
			s := v.server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n, _ := io.Copy(io.Discard, r.Body)
				if n == int64(len(body)) {
					whole.Add(1)
				} else {
					short.Add(1)
				}
			}))
			r := runEngine(t, v, Config{URL: s.URL, Streams: 4, Method: "POST", Body: body}, engineConf(1, 500*time.Millisecond))
			sm := r.Summary
			if sm.Requests < 20 || sm.Errors.Total() != 0 || sm.Requests != whole.Load() || short.Load() != 0 {
				t.Fatalf("%d requests, errors %+v; server got %d whole bodies, %d short", sm.Requests, sm.Errors, whole.Load(), short.Load())
			}
			if min := sm.Requests * int64(len(body)); sm.BytesWritten < min {
				t.Errorf("%d bytes written for %d bodies of %d", sm.BytesWritten, sm.Requests, len(body))
			}
		})
	}
}

// A server that goes away mid-run: the requests in flight fail, the
// connects that follow fail, each is counted, and the run ends on time.
func TestEngineServerGone(t *testing.T) {
	for _, v := range engineVariants {
		t.Run(v.String(), func(t *testing.T) {
			var served atomic.Int64
			s := v.server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				served.Add(1)
				time.Sleep(time.Millisecond)
			}))
			// Gone after 100 answers, not after 300 ms: on a busy machine
			// the run's start (a TLS preflight) could outlast that, or the
			// timer fire after the run (loadgen's engine tests do the same).
			go func() {
				for end := time.Now().Add(10 * time.Second); served.Load() < 100 && time.Now().Before(end); {
					time.Sleep(5 * time.Millisecond)
				}
				s.srv.Close()
			}()
			t0 := time.Now()
			r := runEngine(t, v, Config{URL: s.URL, Streams: 4}, engineConf(2, time.Second))
			sm := r.Summary
			if el := time.Since(t0); el > 3*time.Second {
				t.Errorf("the run took %v for -d 1s", el)
			}
			if sm.Requests == 0 || sm.Errors.Connect == 0 || sm.Connections.Failed == 0 {
				t.Errorf("%d answered, errors %+v, %d connects failed: want answers, then connect errors", sm.Requests, sm.Errors, sm.Connections.Failed)
			}
		})
	}
}

// Rate-paced (open loop) over multiplexed connections: the rate is held,
// every request is answered.
func TestEngineOpenLoop(t *testing.T) {
	for _, v := range engineVariants {
		t.Run(v.String(), func(t *testing.T) {
			var served atomic.Int64
			s := v.server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) }))
			lc := engineConf(2, time.Second)
			lc.Rate = 1000
			probe := ratecheck.StartProbe()
			r := runEngine(t, v, Config{URL: s.URL, Streams: 4}, lc)
			stalled := probe.Stop()
			sm := r.Summary
			p := sm.Pacing
			if p == nil {
				t.Fatal("no pacing in an open-loop run")
			}
			// A stall at the window's end (a busy machine) leaves unsent
			// up to the intervals its max lag spans.
			lag, err := ratecheck.Short(p, 1000, 0, stalled)
			if err != nil {
				t.Fatal(err)
			}
			if sm.Requests < 980-lag || sm.Requests > 1001 || sm.Requests != served.Load() || sm.Errors.Total() != 0 {
				t.Errorf("%d requests (server %d) at 1000/s for 1 s, errors %+v (the max lag %v accounts for %d fewer)", sm.Requests, served.Load(), sm.Errors, p.MaxLag.D(), lag)
			}
			if p.Achieved < float64(980-lag) || p.Unsent > max(2, lag) {
				t.Errorf("pacing %+v", p)
			}
		})
	}
}

// A server that ends every connection with a GOAWAY after N requests, as
// nginx does at keepalive_requests (default 1000) and Envoy at
// max_requests_per_connection: the streams in flight above the GOAWAY's
// last stream are not processed. A real client sends those, and the
// requests after the GOAWAY, on a new connection: through the engine,
// every request is answered, none is an error, the generator's count is
// the server's, and there is a connection per N requests.
//
// With a stream limit below -m too (SETTINGS_MAX_CONCURRENT_STREAMS 2 for
// -m 4): the requests waiting for a stream when the GOAWAY comes go on the
// next connection, none waits out its timeout on the old one.
func TestEngineGoAwayEveryNRequests(t *testing.T) {
	for _, limit := range []uint32{0, 2} {
		for _, v := range engineVariants {
			t.Run(fmt.Sprintf("limit=%d/%s", limit, v), func(t *testing.T) {
				var settings []http2.Setting
				if limit > 0 {
					settings = []http2.Setting{{ID: http2.SettingMaxConcurrentStreams, Val: limit}}
				}
				srv := &h2peer.EveryN{PerConn: 20, Respond: func(p *peer, id uint32) { p.Respond(id, "200", 5) }}
				url := v.peer(t, settings, srv.Serve)
				lc := engineConf(2, time.Second)
				lc.Timeout = results.Duration(2 * time.Second)
				r := runEngine(t, v, Config{URL: url, Streams: 4}, lc)
				srv.Check(t, r.Summary, lc.Connections*4)
			})
		}
	}
}

// Closed loop, a request the server left unprocessed (above a GOAWAY's
// last stream, or refused unsent once the GOAWAY came) is sent again on
// a new connection, and its latency runs from that send, as every
// closed-loop request's: the new connection's TLS handshake belongs to
// the connect histogram, on both drivers. Every handshake here takes
// 50 ms, and each connection serves one or two requests, then GOAWAY.
//
// One stream per connection: with two, which of the two requests a new
// connection serves first is the scheduler's choice, and under -race
// the same one lost five times running (the engine's bound on resends,
// then a failure) about one run in forty. With one, every connection
// serves the request it was opened for.
func TestEngineResendLeavesTheHandshakeOut(t *testing.T) {
	const handshake = 50 * time.Millisecond
	for _, v := range engineVariants {
		if !v.tls {
			continue // an h2c socket is ready at once
		}
		t.Run(v.String(), func(t *testing.T) {
			cfg := &tls.Config{Certificates: []tls.Certificate{testCert(t).TLS},
				GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
					time.Sleep(handshake) // a slow handshake, not an order of events
					return nil, nil
				}}
			// Odd connections serve one request, even ones two, then GOAWAY.
			var conns, serving, served, unprocessed atomic.Int64
			url := "https://" + h2peer.StartTLS(t, cfg, nil, func(p *peer) {
				perConn := 1 + int(conns.Add(1)+1)%2
				for n := 1; ; n++ {
					h := p.Request()
					if h == nil {
						return
					}
					if n > perConn {
						unprocessed.Add(1) // above the GOAWAY's last stream
						continue
					}
					served.Add(1)
					if n == 1 {
						serving.Add(1)
					}
					p.Respond(h.StreamID, "200", 5)
					if n == perConn {
						p.GoAway(h.StreamID)
					}
				}
			}) + "/"
			lc := engineConf(1, 0)
			lc.Requests, lc.Timeout = 16, results.Duration(5*time.Second)
			r := runEngine(t, v, Config{URL: url, Streams: 1}, lc)
			sm := r.Summary
			// Each connection that served but the last ends in a GOAWAY
			// with a request after its last served one: sent again.
			resent := serving.Load() - 1
			t.Logf("%d requests, %d served, %d sent again (%d seen unprocessed by the server), %d connections",
				sm.Requests, served.Load(), resent, unprocessed.Load(), sm.Connections.Established)
			if sm.Requests != 16 || sm.Errors.Total() != 0 || served.Load() != 16 {
				t.Fatalf("%d answered, errors %+v, %d served: want all 16 answered", sm.Requests, sm.Errors, served.Load())
			}
			if resent < 3 {
				t.Fatalf("%d requests sent again: the test needs a few", resent)
			}
			h, err := hist.Decode(r.Histograms.Latency)
			if err != nil {
				t.Fatal(err)
			}
			var slow int64
			for _, b := range h.Buckets() {
				if b.From >= handshake {
					slow += b.Count
				}
			}
			// A busy machine may stall one request that long; a handshake
			// counted in the resent requests' latency makes them all.
			if slow > 1 {
				t.Errorf("%d of %d requests took %v or more (%d sent again): a handshake counted as latency", slow, h.Count(), handshake, resent)
			}
		})
	}
}

// A server that answers a POST before taking its whole body (RFC 9113
// §8.1: a 413, say), with a WINDOW_UPDATE in the same write: the client
// stops sending that body (no DATA on a stream that ended), resets the
// stream, and the next request goes on.
func TestEngineAnswerBeforeTheBody(t *testing.T) {
	body := make([]byte, 200<<10)
	for _, v := range engineVariants {
		t.Run(v.String(), func(t *testing.T) {
			var answered atomic.Int64
			url := v.peer(t, nil, func(p *peer) {
				ended := map[uint32]bool{}
				got := map[uint32]int{}
				for {
					f := p.Next()
					if f == nil {
						return
					}
					switch f := f.(type) {
					case *http2.MetaHeadersFrame:
						if f.StreamEnded() {
							t.Errorf("stream %d: a POST without its body", f.StreamID)
						}
					case *http2.DataFrame:
						id := f.StreamID
						if ended[id] {
							t.Errorf("DATA on stream %d after its response ended it", id)
							continue
						}
						if got[id] += len(f.Data()); got[id] < 1<<16-1 {
							continue // the whole initial window first
						}
						ended[id] = true
						// One write: windows opened, then the answer.
						b := h2wire.AppendWindowUpdate(nil, 0, 1<<20)
						b = h2wire.AppendWindowUpdate(b, id, 1<<20)
						hb := p.Block(":status", "413")
						b = h2wire.AppendFrameHeader(b, len(hb), http2.FrameHeaders, http2.FlagHeadersEndHeaders|http2.FlagHeadersEndStream, id)
						b = append(b, hb...)
						// Counted before the write: the client may read the
						// fifth answer and end the run before this goroutine
						// runs again.
						answered.Add(1)
						p.Mu.Lock()
						p.C.Write(b)
						p.Mu.Unlock()
					}
				}
			})
			lc := engineConf(1, 0)
			lc.Requests = 5
			r := runEngine(t, v, Config{URL: url, Method: "POST", Body: body}, lc)
			sm := r.Summary
			if sm.Latency.Count != 5 || sm.Status[413] != 5 || answered.Load() != 5 {
				t.Errorf("%d requests counted, status %v, server answered %d: want five 413s", sm.Latency.Count, sm.Status, answered.Load())
			}
		})
	}
}

// serveTLS serves each connection's TLS handshake (ALPN h2), then the
// HTTP/2 preface and SETTINGS, and hands serve the raw connection too.
func serveTLS(t *testing.T, serve func(raw net.Conn, p *peer)) string {
	cfg := &tls.Config{Certificates: []tls.Certificate{testCert(t).TLS}, NextProtos: []string{"h2"}}
	return "https://" + serveRaw(t, func(raw net.Conn) {
		tc := tls.Server(raw, cfg)
		if tc.Handshake() != nil {
			return
		}
		p := h2peer.New(t, tc)
		preface := make([]byte, len(h2wire.ClientPreface))
		if _, err := io.ReadFull(tc, preface); err != nil {
			return
		}
		p.Fr.WriteSettings()
		serve(raw, p)
	}) + "/"
}

// openFDs counts the process's open descriptors.
func openFDs(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(ents)
}

// stallingTLS serves the first connection (the preflight's) over TLS
// with HTTP/2's SETTINGS, and takes every later one without a word until
// hold passed or release is closed.
func stallingTLS(t *testing.T, hold time.Duration, release <-chan struct{}) string {
	var first atomic.Bool
	cfg := &tls.Config{Certificates: []tls.Certificate{testCert(t).TLS}, NextProtos: []string{"h2"}}
	return "https://" + serveRaw(t, func(raw net.Conn) {
		if !first.CompareAndSwap(false, true) {
			select {
			case <-release:
			case <-time.After(hold):
			}
			return
		}
		tc := tls.Server(raw, cfg)
		if tc.Handshake() != nil {
			return
		}
		h2peer.New(t, tc).Fr.WriteSettings()
		io.Copy(io.Discard, tc)
	}) + "/"
}

// Over TLS on the loop, a connection's handshake is a goroutine's; one
// that never ends (the server takes the connection and says nothing) is
// a connect error at the timeout, the run ends on time, and what the
// goroutines opened is closed, the late ones' too.
func TestEngineTLSHandshakeStalls(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	url := stallingTLS(t, 300*time.Millisecond, release) // past the client's timeout
	before := openFDs(t)
	lc := engineConf(2, 600*time.Millisecond)
	lc.Timeout = results.Duration(150 * time.Millisecond)
	t0 := time.Now()
	r := runEngine(t, variant{loadgen.DriverLoop, true}, Config{URL: url, Streams: 2}, lc)
	if el := time.Since(t0); el > 2*time.Second {
		t.Errorf("the run took %v for -d 600ms", el)
	}
	sm := r.Summary
	if sm.Requests != 0 || sm.Errors.Connect == 0 || sm.Errors.Total() != sm.Errors.Connect {
		t.Errorf("%d answered, errors %+v: want connect errors only", sm.Requests, sm.Errors)
	}
	eventually(t, "the descriptors of the stalled handshakes to be closed", func() bool {
		return openFDs(t) <= before+1 // the preflight's, on the server
	})
}

// Ctrl-C while the loop's connections are still in their handshakes: the
// run stops at once, says it was interrupted, and leaves no descriptor.
func TestEngineTLSInterruptWhileOpening(t *testing.T) {
	release := make(chan struct{})
	url := stallingTLS(t, time.Minute, release)
	before := openFDs(t)
	d, err := NewDialer(Config{URL: url, TLS: protocol.TLS{Insecure: true}, Streams: 2})
	if err != nil {
		t.Fatal(err)
	}
	lc := engineConf(4, 10*time.Second)
	lc.Timeout = results.Duration(5 * time.Second)
	lc.Target, lc.Protocol, lc.Driver, lc.Streams, lc.Threads = url, "h2", loadgen.DriverLoop, 2, 1
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(300*time.Millisecond, cancel)
	t0 := time.Now()
	r, err := loadgen.Run(ctx, lc, d)
	if err != nil {
		t.Fatal(err)
	}
	if el := time.Since(t0); el > 2*time.Second {
		t.Errorf("the run took %v to stop after Ctrl-C at 300 ms", el)
	}
	if !r.Interrupted || r.Summary.Requests != 0 {
		t.Errorf("interrupted %v, %d requests: want an interrupted run, nothing answered", r.Interrupted, r.Summary.Requests)
	}
	close(release) // the server lets go of what it holds
	eventually(t, "the descriptors of the interrupted handshakes to be closed", func() bool {
		return openFDs(t) <= before+1 // the preflight's, on the server
	})
}

// A record that breaks TLS mid-run (bytes written around the TLS layer)
// fails its connection's requests as read errors; the loop opens a new
// connection and goes on.
func TestEngineTLSBrokenRecord(t *testing.T) {
	var conns atomic.Int64
	url := serveTLS(t, func(raw net.Conn, p *peer) {
		conns.Add(1)
		for n := 0; ; n++ {
			h := p.Request()
			if h == nil {
				return
			}
			if n == 20 {
				raw.Write([]byte{23, 3, 3, 0, 20, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
				return
			}
			p.Respond(h.StreamID, "200", 10)
		}
	})
	lc := engineConf(1, 600*time.Millisecond)
	r := runEngine(t, variant{loadgen.DriverLoop, true}, Config{URL: url, Streams: 2}, lc)
	sm := r.Summary
	if sm.Requests < 40 || sm.Errors.Read == 0 || sm.Errors.Total() != sm.Errors.Read {
		t.Errorf("%d answered, errors %+v: want answers and read errors only", sm.Requests, sm.Errors)
	}
	if sm.Connections.Established < 2 || conns.Load() < 3 {
		t.Errorf("%d connections established (%d served): a broken one must be replaced", sm.Connections.Established, conns.Load())
	}
}
