// Package proxytest is the conformance suite every sidecar profile
// (meshes/nginxingress, haproxy, caddy) runs against a real proxy on
// loopback: the outbound listener forwards to the upstream over kept-alive
// connections, the inbound listener to the app, bodies of 1 MiB stream
// through, the proxy's own counters see every request, its processes burn
// CPU doing it and Close leaves none behind; and two of them, client and
// server sidecar, speak mutual TLS with certificates of a run's CA, the
// server side telling the app the client's certificate hash.
package proxytest

import (
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"loadgen/meshes/layout"
	"loadgen/meshes/mtls"
	"loadgen/meshes/proxyproc"
	"loadgen/results/cost"
)

// Proxy is a running profile.
type Proxy interface {
	PIDs() ([]int, error)
	// Requests is the HTTP requests the proxy counted on its inbound and
	// outbound listeners, by its own counters.
	Requests() (uint64, error)
	Close() error
}

// Profile is what the suite needs of one proxy.
type Profile struct {
	Name  string // the proxies' process name, as /proc/PID/comm reads
	Start func(ctx context.Context, s layout.Sidecar) (Proxy, error)
	// Hash is how the profile's X-Forwarded-Client-Cert Hash= writes a
	// peer certificate: SHA256 (Envoy's, HAProxy's, Caddy's) or SHA1 (all
	// nginx has).
	Hash func(der []byte) string
}

// SHA256 and SHA1 are the lower-case hex digests of a certificate.
func SHA256(der []byte) string { s := sha256.Sum256(der); return hex.EncodeToString(s[:]) }
func SHA1(der []byte) string   { s := sha1.Sum(der); return hex.EncodeToString(s[:]) }

// Requests the suite sends per listener.
const requests = 200

// Run runs the suite as subtests of t.
func Run(t *testing.T, p Profile) {
	t.Run("outbound and inbound", func(t *testing.T) { testForward(t, p) })
	t.Run("mtls", func(t *testing.T) { testMTLS(t, p) })
}

func testForward(t *testing.T, p Profile) {
	app := StartApp(t)
	ports := freePorts(t, 4)
	s := layout.Loopback(ports[0], app.Port(), ports[1], app.Port(), ports[2])
	px := start(t, p, s)
	pids, err := px.PIDs()
	if err != nil || len(pids) == 0 {
		t.Fatalf("PIDs() = %v, %v", pids, err)
	}
	sampler, err := cost.Start(cost.Selector{PIDs: pids}, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	sent := 0
	for _, l := range []netip.AddrPort{s.Outbound, s.Inbound} {
		Get(t, client, "http://"+l.String()+"/bytes/1048576") // streams, not buffered to disk
		sent += 1 + Load(t, client, "http://"+l.String()+"/bytes/1024", requests, pids)
	}
	usage := sampler.Stop()
	if got := app.Served(); got != int64(sent) {
		t.Errorf("the app served %d requests, the client sent %d", got, sent)
	}
	WaitCount(t, "the proxy", px.Requests, uint64(sent))
	if conns := app.Conns(); conns > int64(sent/10) {
		t.Errorf("the app saw %d connections for %d requests: upstream keepalive is not working", conns, sent)
	}
	if usage.CPUSeconds <= 0 {
		t.Errorf("the proxy's processes %v used no CPU (%+v)", pids, usage)
	}
	closeAndCheck(t, p, px, pids)
}

// testMTLS checks that a client sidecar's outbound side originates mutual TLS
// to a server sidecar's inbound side, which verifies the client's certificate
// and tells the app its hash.
func testMTLS(t *testing.T, p Profile) {
	app := StartApp(t)
	dir := t.TempDir()
	ca, err := mtls.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	clientW, serverW := mtls.DefaultPair()
	serverFiles, _, err := ca.Issue(serverW, clientW)
	if err != nil {
		t.Fatal(err)
	}
	clientFiles, clientCert, err := ca.Issue(clientW, serverW)
	if err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 6)
	server := layout.Loopback(ports[0], app.Port(), ports[1], app.Port(), ports[2])
	server.MTLS = serverFiles
	client := layout.Loopback(ports[3], app.Port(), ports[4], server.Inbound.Port(), ports[5])
	client.MTLS = clientFiles
	sp := start(t, p, server)
	cp := start(t, p, client)

	httpc := &http.Client{Timeout: 10 * time.Second}
	for range requests {
		Get(t, httpc, "http://"+client.Outbound.String()+"/bytes/100")
	}
	if got := app.Served(); got != requests {
		t.Errorf("the app served %d requests, the client sent %d", got, requests)
	}
	want := p.Hash(clientCert.Leaf.Raw)
	for xfcc, n := range app.XFCC() {
		if !strings.Contains(xfcc, "Hash="+want) {
			t.Errorf("%d requests reached the app with X-Forwarded-Client-Cert %q, want Hash=%s (the client sidecar's certificate)", n, xfcc, want)
		}
	}
	if len(app.XFCC()) == 0 {
		t.Error("no request reached the app with X-Forwarded-Client-Cert: the server sidecar saw no client certificate")
	}
	// Plaintext to the server's inbound side is refused: mTLS is required.
	resp, err := httpc.Get("http://" + server.Inbound.String() + "/bytes/1")
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Errorf("plaintext request to the mTLS inbound listener: %s", resp.Status)
		}
	}
	if got := app.Served(); got != requests {
		t.Errorf("after a plaintext try the app served %d requests, want %d", got, requests)
	}
	for _, px := range []Proxy{cp, sp} {
		pids, _ := px.PIDs()
		closeAndCheck(t, p, px, pids)
	}
}

func start(t *testing.T, p Profile, s layout.Sidecar) Proxy {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	px, err := p.Start(ctx, s)
	if err != nil {
		t.Fatalf("start %s: %v", p.Name, err)
	}
	t.Cleanup(func() { px.Close() })
	return px
}

func closeAndCheck(t *testing.T, p Profile, px Proxy, pids []int) {
	t.Helper()
	if err := px.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for _, pid := range pids {
		if proxyproc.Alive(pid, p.Name) {
			t.Errorf("%s pid %d still running after Close", p.Name, pid)
		}
	}
}

func freePorts(t *testing.T, n int) []uint16 {
	t.Helper()
	ports, err := proxyproc.FreePorts("127.0.0.1", n)
	if err != nil {
		t.Fatal(err)
	}
	return ports
}

// Get sends one GET, reads the whole body and fails t unless it is 200
// with the body length /bytes/N asked for.
func Get(t *testing.T, c *http.Client, url string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s, %d bytes, %v", url, resp.Status, n, err)
	}
	if i := strings.LastIndex(url, "/bytes/"); i >= 0 {
		if want, _ := strconv.ParseInt(url[i+len("/bytes/"):], 10, 64); n != want {
			t.Fatalf("GET %s: %d bytes, want %d", url, n, want)
		}
	}
}

// App is an upstream that counts requests and connections and records the
// X-Forwarded-Client-Cert headers it was sent. /bytes/N answers N bytes.
type App struct {
	srv    *http.Server
	ln     net.Listener
	served atomic.Int64
	conns  atomic.Int64
	mu     sync.Mutex
	xfcc   map[string]int
}

// StartApp starts an App on 127.0.0.1, closed when t ends.
func StartApp(t *testing.T) *App {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a := &App{ln: ln, xfcc: map[string]int{}}
	a.srv = &http.Server{
		Handler: http.HandlerFunc(a.serve),
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				a.conns.Add(1)
			}
		},
	}
	go a.srv.Serve(ln)
	t.Cleanup(func() { a.srv.Close() })
	return a
}

func (a *App) serve(w http.ResponseWriter, r *http.Request) {
	a.served.Add(1)
	if v := r.Header.Get("X-Forwarded-Client-Cert"); v != "" {
		a.mu.Lock()
		a.xfcc[v]++
		a.mu.Unlock()
	}
	n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/bytes/"))
	if err != nil || n < 0 || n > 1<<20 {
		http.Error(w, "want /bytes/N", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(n))
	w.Write(make([]byte, n))
}

// Port is the app's port.
func (a *App) Port() uint16 { return uint16(a.ln.Addr().(*net.TCPAddr).Port) }

// Served is the requests answered, Conns the connections accepted.
func (a *App) Served() int64 { return a.served.Load() }
func (a *App) Conns() int64  { return a.conns.Load() }

// XFCC counts the requests per X-Forwarded-Client-Cert value.
func (a *App) XFCC() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	m := make(map[string]int, len(a.xfcc))
	for k, v := range a.xfcc {
		m[k] = v
	}
	return m
}

// String names the app in messages.
func (a *App) String() string { return fmt.Sprintf("app on %s", a.ln.Addr()) }
