package h3

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"

	"loadgen/internal/race"
	"loadgen/loadgen/protocol"
	"loadgen/targets/tlscert"
)

// server is quic-go's HTTP/3 server on loopback, in-process, counting the
// QUIC connections it accepted.
type server struct {
	url   string
	conns atomic.Int64
	srv   *http3.Server
	mu    sync.Mutex
	qs    []*quic.Conn // every connection accepted
	udp   *net.UDPConn
}

// used0RTT counts the server's connections that took 0-RTT among those
// whose handshake completed (of), once each completed or ended.
func (s *server) used0RTT() (n, of int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, q := range s.qs {
		select {
		case <-q.HandshakeComplete():
		case <-q.Context().Done():
			select {
			case <-q.HandshakeComplete():
			default:
				continue // ended before its handshake completed
			}
		}
		of++
		if q.ConnectionState().Used0RTT {
			n++
		}
	}
	return n, of
}

// cycle dials, sends one request and closes, n times: a new connection each.
func cycle(t *testing.T, d *Dialer, n int) (outcomes []protocol.Outcome) {
	t.Helper()
	for range n {
		c, err := d.Dial(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		outcomes = append(outcomes, c.Do(context.Background(), time.Now().Add(5*time.Second)))
		c.Close()
	}
	return outcomes
}

func startServer(t *testing.T, h http.Handler) *server {
	return startServerWith(t, h, nil)
}

func startServerWith(t *testing.T, h http.Handler, qc *quic.Config) *server {
	t.Helper()
	return startServerOn(t, h, qc, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
}

// startServerOn serves on addr.
func startServerOn(t *testing.T, h http.Handler, qc *quic.Config, addr *net.UDPAddr) *server {
	t.Helper()
	cert, err := tlscert.New(tlscert.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	udp, err := net.ListenUDP("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s := &server{url: "https://" + udp.LocalAddr().String(), udp: udp}
	s.srv = &http3.Server{
		Handler:    h,
		TLSConfig:  http3.ConfigureTLSConfig(&tls.Config{Certificates: []tls.Certificate{cert.TLS}}),
		QUICConfig: qc,
		ConnContext: func(ctx context.Context, c *quic.Conn) context.Context {
			s.conns.Add(1)
			s.mu.Lock()
			s.qs = append(s.qs, c)
			s.mu.Unlock()
			return context.WithValue(ctx, connKey{}, c)
		},
	}
	go s.srv.Serve(udp)
	t.Cleanup(func() { s.srv.Close(); udp.Close() })
	return s
}

type connKey struct{}

func dial(t *testing.T, cfg Config) (*Dialer, protocol.Conn) {
	t.Helper()
	cfg.TLS.Insecure = true
	d, err := NewDialer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return d, c
}

func echo(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/status/503":
		w.WriteHeader(503)
	case "/reset":
		panic(http.ErrAbortHandler) // the server resets the stream
	case "/slow":
		<-r.Context().Done()
	case "/close":
		r.Context().Value(connKey{}).(*quic.Conn).CloseWithError(0x100, "closing")
	default:
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Method", r.Method)
		w.Write([]byte(r.Method + " " + r.Header.Get("X-Test") + " " + string(b)))
	}
}

// A request and its answer: the status, the body's bytes, the request's,
// its method and headers as given.
func TestDo(t *testing.T) {
	s := startServer(t, http.HandlerFunc(echo))
	_, c := dial(t, Config{URL: s.url + "/echo", Method: "PUT", Headers: []string{"X-Test: yes"}, Body: []byte("hello")})
	o := c.Do(context.Background(), time.Now().Add(5*time.Second))
	if want := len("PUT yes hello"); o.Err != protocol.None || o.Status != 200 || o.Bytes != int64(want) || o.Written != 5 {
		t.Errorf("%+v; want 200, %d bytes read, 5 written", o, want)
	}
	_, c = dial(t, Config{URL: s.url + "/status/503"})
	if o := c.Do(context.Background(), time.Time{}); o.Err != protocol.Status || o.Status != 503 || o.Done {
		t.Errorf("503: %+v, want Status, not Done", o)
	}
}

// Streams Dials share a QUIC connection; the next one opens another.
func TestStreamsShareAConnection(t *testing.T) {
	s := startServer(t, http.HandlerFunc(echo))
	d, c := dial(t, Config{URL: s.url + "/get", Streams: 3})
	conns := []protocol.Conn{c}
	for range 5 {
		c, err := d.Dial(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		if o := c.Do(context.Background(), time.Time{}); o.Err != protocol.None {
			t.Fatalf("%+v", o)
		}
	}
	if d.Opened() != 2 || s.conns.Load() != 2 {
		t.Errorf("6 Conns at -m 3: %d connections opened, the server accepted %d; want 2", d.Opened(), s.conns.Load())
	}
	for _, c := range conns {
		c.Close()
	}
}

// A request past its deadline is a Timeout that keeps the connection; one
// the server resets is a Read that keeps it too.
func TestTimeoutAndResetKeepTheConnection(t *testing.T) {
	s := startServer(t, http.HandlerFunc(echo))
	for _, path := range []string{"/slow", "/reset"} {
		d, c := dial(t, Config{URL: s.url + path})
		want := map[string]protocol.ErrClass{"/slow": protocol.Timeout, "/reset": protocol.Read}[path]
		for range 2 {
			if o := c.Do(context.Background(), time.Now().Add(50*time.Millisecond)); o.Err != want || o.Done {
				t.Errorf("%s: %+v, want %v and not Done", path, o, want)
			}
		}
		if d.Opened() != 1 {
			t.Errorf("%s: %d connections, want 1", path, d.Opened())
		}
	}
}

// Close from another goroutine ends a Do in progress: Read, Done.
func TestCloseAbortsDo(t *testing.T) {
	s := startServer(t, http.HandlerFunc(echo))
	_, c := dial(t, Config{URL: s.url + "/slow"})
	done := make(chan protocol.Outcome)
	go func() { done <- c.Do(context.Background(), time.Time{}) }()
	c.Close()
	if o := <-done; o.Err != protocol.Read || !o.Done {
		t.Errorf("%+v, want Read and Done", o)
	}
}

// The run's context ending ends a Do without a deadline: Timeout, and
// the connection is kept.
func TestRunEndEndsDo(t *testing.T) {
	s := startServer(t, http.HandlerFunc(echo))
	_, c := dial(t, Config{URL: s.url + "/slow"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan protocol.Outcome)
	go func() { done <- c.Do(ctx, time.Time{}) }()
	cancel()
	if o := <-done; o.Err != protocol.Timeout || o.Done {
		t.Errorf("%+v, want Timeout and not Done", o)
	}
}

// The server closing the connection ends its Conns' requests with Done,
// and the next Dial opens a new connection.
func TestConnectionClosedIsDone(t *testing.T) {
	s := startServer(t, http.HandlerFunc(echo))
	d, c := dial(t, Config{URL: s.url + "/close"})
	if o := c.Do(context.Background(), time.Now().Add(5*time.Second)); o.Err != protocol.Read || !o.Done {
		t.Errorf("the server closed the connection: %+v, want Read and Done", o)
	}
	c.Close()
	c, err := d.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if o := c.Do(context.Background(), time.Now().Add(5*time.Second)); o.Err != protocol.Read || !o.Done {
		t.Errorf("on the new connection: %+v, want Read and Done again", o) // and the server has seen it
	}
	if d.Opened() != 2 || s.conns.Load() != 2 {
		t.Errorf("after Done: %d connections opened, the server accepted %d; want 2", d.Opened(), s.conns.Load())
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{URL: "http://127.0.0.1:1/"}, "https://"},
		{Config{URL: "https:///x"}, "no host"},
		{Config{URL: "https://127.0.0.1:1/", Streams: -1}, "at least 1"},
		{Config{URL: "https://127.0.0.1:1/", Method: "GE T"}, "bad method"},
		{Config{URL: "https://127.0.0.1:1/", Headers: []string{"nocolon"}}, "Name: value"},
		{Config{URL: "https://127.0.0.1:1/", TLS: protocol.TLS{MaxVersion: tls.VersionTLS12}}, "TLS 1.3"},
	} {
		_, err := NewDialer(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want one line with %q", tc.cfg, err, tc.want)
		}
	}
}

// 0-RTT is off: against a server that accepts it, with sessions resumed
// (--tls-resume), no connection uses it.
func TestNo0RTT(t *testing.T) {
	s := startServerWith(t, http.HandlerFunc(echo), &quic.Config{Allow0RTT: true})
	d, err := NewDialer(Config{URL: s.url + "/get", TLS: protocol.TLS{Insecure: true, Resume: true}})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 { // one connection each, as --new-conn
		c, err := d.Dial(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if o := c.Do(context.Background(), time.Now().Add(5*time.Second)); o.Err != protocol.None {
			t.Fatalf("%+v", o)
		}
		c.Close()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	resumed := 0
	for _, q := range s.qs {
		<-q.HandshakeComplete()
		st := q.ConnectionState()
		if st.Used0RTT {
			t.Error("a connection used 0-RTT")
		}
		if st.TLS.DidResume {
			resumed++
		}
	}
	if len(s.qs) != 3 || resumed == 0 {
		t.Errorf("%d connections, %d resumed; want 3, some resumed (so 0-RTT was possible)", len(s.qs), resumed)
	}
}

// With ZeroRTT, a resumed connection sends its request in 0-RTT: the
// server's connections after the first took it.
func TestZeroRTT(t *testing.T) {
	skipUnderRace(t)
	s := startServerWith(t, http.HandlerFunc(echo), &quic.Config{Allow0RTT: true})
	d, err := NewDialer(Config{URL: s.url + "/get", ZeroRTT: true, TLS: protocol.TLS{Insecure: true}})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range cycle(t, d, 3) {
		if o.Err != protocol.None || o.Status != 200 {
			t.Fatalf("%+v", o)
		}
	}
	if n, of := s.used0RTT(); n != 2 || of != 3 {
		t.Errorf("%d of %d connections took 0-RTT; want 2 of 3 (all but the first)", n, of)
	}
}

// A server that rejects 0-RTT (its session keys are not the ones that
// issued the ticket): the request is Unsent, sent again by the engine,
// and no later connection tries 0-RTT.
func TestZeroRTTRejected(t *testing.T) {
	skipUnderRace(t)
	a := startServerWith(t, http.HandlerFunc(echo), &quic.Config{Allow0RTT: true})
	d, err := NewDialer(Config{URL: a.url + "/get", ZeroRTT: true, TLS: protocol.TLS{Insecure: true}})
	if err != nil {
		t.Fatal(err)
	}
	cycle(t, d, 1) // a ticket that allows 0-RTT
	addr := a.udp.LocalAddr().(*net.UDPAddr)
	a.srv.Close()
	a.udp.Close()
	b := startServerOn(t, http.HandlerFunc(echo), &quic.Config{Allow0RTT: true}, addr)
	out := cycle(t, d, 3)
	if o := out[0]; o.Err != protocol.Read || !o.Done || !o.Unsent {
		t.Errorf("0-RTT rejected: %+v, want Read, Done and Unsent", o)
	}
	for _, o := range out[1:] {
		if o.Err != protocol.None {
			t.Errorf("after the rejection: %+v, want success", o)
		}
	}
	if n, of := b.used0RTT(); n != 0 || of < 2 {
		t.Errorf("%d of %d connections took 0-RTT; want none, of at least the 2 after the rejection", n, of)
	}
}

// A request on a connection the server closed never goes out: Unsent (and
// Done), which the engine sends again on a new connection; the server saw
// none of them. (After a GOAWAY, quic-go's client opens no stream either:
// the same path.)
func TestUnsentOnClosedConnection(t *testing.T) {
	var got atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/get" {
			got.Add(1)
		}
		echo(w, r)
	})
	t.Run("closed", func(t *testing.T) {
		s := startServer(t, h)
		_, c := dial(t, Config{URL: s.url + "/get", Streams: 2})
		d := c.(*stream).d
		c2, err := d.Dial(context.Background()) // the same connection
		if err != nil {
			t.Fatal(err)
		}
		defer c2.Close()
		if o := c.Do(context.Background(), time.Now().Add(5*time.Second)); o.Err != protocol.None {
			t.Fatalf("%+v", o)
		}
		before := got.Load()
		s.mu.Lock()
		q := s.qs[0]
		s.mu.Unlock()
		q.CloseWithError(0x100, "closing")
		<-c.(*stream).c.conn.Context().Done() // the client knows
		for _, c := range []protocol.Conn{c, c2} {
			if o := c.Do(context.Background(), time.Now().Add(5*time.Second)); o.Err != protocol.Read || !o.Done || !o.Unsent {
				t.Errorf("on the closed connection: %+v, want Read, Done and Unsent", o)
			}
		}
		if got.Load() != before {
			t.Errorf("the server saw %d requests after the close", got.Load()-before)
		}
	})
}

// skipUnderRace skips a 0-RTT test under the race detector: quic-go
// v0.65.0 writes the server's transport parameters on its handshake
// goroutine while a stream opened in 0-RTT reads them
// (github.com/quic-go/quic-go/issues/4303, open: "Data race assigning
// peerParams when 0-RTT is used"), which the detector reports as ours.
// Without -race the tests run in make test's unit stage.
func skipUnderRace(t *testing.T) {
	t.Helper()
	if race.Enabled {
		t.Skip("quic-go's own race in 0-RTT (quic-go/quic-go#4303): this test runs without -race")
	}
}
