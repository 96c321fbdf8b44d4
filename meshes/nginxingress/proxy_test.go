//go:build linux

package nginxingress

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"loadgen/meshes/proxyproc"
	"loadgen/targets/tlscert"
)

// upstream is the target behind nginx: it counts requests and new
// connections, answers "upstream saw PATH", bigSize bytes for /big, and
// nothing, for as long as the test runs, for /hang.
type upstream struct {
	srv      *httptest.Server
	requests atomic.Int64
	conns    atomic.Int64
	done     chan struct{} // closed at the end of the test: /hang returns
}

const bigSize = 8 << 20 // /big

func startUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{done: make(chan struct{})}
	u.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.requests.Add(1)
		switch r.URL.Path {
		case "/big":
			w.Write(bytes.Repeat([]byte("0123456789abcdef"), bigSize/16))
		case "/hang": // until the client or the test goes away
			select {
			case <-r.Context().Done():
			case <-u.done:
			}
		default:
			fmt.Fprintf(w, "upstream saw %s", r.URL.Path)
		}
	}))
	u.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			u.conns.Add(1)
		}
	}
	u.srv.Start() // on 127.0.0.1:0
	t.Cleanup(func() {
		close(u.done)
		u.srv.Close()
	})
	return u
}

func (u *upstream) addr() string { return u.srv.Listener.Addr().String() }

// startProxy starts nginx and makes sure, whatever the test does, that no
// process of it outlives the test: Close, then SIGKILL by pid to anything
// left in its process group.
func startProxy(t *testing.T, cfg Config) *Proxy {
	t.Helper()
	p, err := Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		p.Close()
		pids, _ := groupMembers(p.MasterPID())
		for _, pid := range append(pids, p.MasterPID()) {
			if alive(pid) {
				t.Errorf("nginx pid %d outlived Close; killing it", pid)
				kill(pid)
			}
		}
	})
	return p
}

func get(t *testing.T, c *http.Client, url string) (*http.Response, []byte) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", url, resp.Status, body)
	}
	return resp, body
}

func mustRequest(t *testing.T, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// smallRcvBuf makes a slow client's socket hold little, so that what the
// reader does not take stays in nginx.
func smallRcvBuf(_, _ string, c syscall.RawConn) error {
	var err error
	c.Control(func(fd uintptr) {
		err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
	})
	return err
}

func TestProxy(t *testing.T) {
	needNginx(t)
	up := startUpstream(t)
	p := startProxy(t, Config{Listen: "127.0.0.1:0", Upstream: up.addr(), Workers: 2})

	if !strings.HasPrefix(p.Addr(), "127.0.0.1:") || strings.HasSuffix(p.Addr(), ":0") {
		t.Fatalf("Addr() = %q, want 127.0.0.1 with a real port", p.Addr())
	}
	if p.URL() != "http://"+p.Addr() {
		t.Errorf("URL() = %q", p.URL())
	}

	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	for i := range 100 {
		path := "/req/" + strconv.Itoa(i)
		_, body := get(t, client, p.URL()+path)
		if want := "upstream saw " + path; string(body) != want {
			t.Fatalf("GET %s: body %q, want %q", path, body, want)
		}
	}
	if n := up.requests.Load(); n != 100 {
		t.Errorf("upstream saw %d requests, want 100", n)
	}
	// Sequential requests on one client connection: one worker, one
	// keepalive upstream connection (at most one per worker).
	if n := up.conns.Load(); n > 2 {
		t.Errorf("nginx opened %d upstream connections for 100 sequential requests: upstream keepalive is not working", n)
	}
	// A big answer to a slow reader with a small receive buffer: with
	// proxy_buffering on, nginx would read it all from the upstream at once
	// and spill it to a temp file (and say so in error.log, at warn); off,
	// it streams at the reader's pace. (8 MiB: loopback socket buffers
	// alone can absorb 1 MiB.)
	slow := &http.Transport{DialContext: (&net.Dialer{Control: smallRcvBuf}).DialContext}
	defer slow.CloseIdleConnections()
	resp, err := slow.RoundTrip(mustRequest(t, p.URL()+"/big"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadFull(resp.Body, make([]byte, 1))
	time.Sleep(300 * time.Millisecond)
	rest, err2 := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || err2 != nil || 1+len(rest) != bigSize {
		t.Errorf("GET /big: %d bytes (%v, %v), want %d", 1+len(rest), err, err2, bigSize)
	}
	if log, _ := os.ReadFile(filepath.Join(p.Dir(), "error.log")); bytes.Contains(log, []byte("temporary file")) {
		t.Errorf("nginx buffered the answer to disk: %s", log)
	}

	pids, err := p.PIDs()
	if err != nil {
		t.Fatal(err)
	}
	if len(pids) != 3 || pids[0] != p.MasterPID() {
		t.Fatalf("PIDs() = %v, want master %d and 2 workers", pids, p.MasterPID())
	}
	for _, pid := range pids {
		if !alive(pid) {
			t.Errorf("pid %d of PIDs() is not a live nginx process", pid)
		}
	}
	for _, pid := range pids[1:] {
		if st, _ := proxyproc.ReadStat(pid); st.PPID != p.MasterPID() {
			t.Errorf("worker %d has parent %d, want the master %d", pid, st.PPID, p.MasterPID())
		}
	}

	dir := p.Dir()
	for _, f := range []string{"nginx.conf", "nginx.pid", "error.log"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("run directory: %v", err)
		}
	}
	tr.CloseIdleConnections()
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pid %d still running after Close", pid)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("run directory %s not removed by Close: %v", dir, err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := p.PIDs(); err == nil {
		t.Error("PIDs() after Close: no error")
	}
}

// TestCloseKillsStuckNginx checks that a request that never ends keeps a
// worker from quitting gracefully; Close kills it after the grace period.
func TestCloseKillsStuckNginx(t *testing.T) {
	needNginx(t)
	up := startUpstream(t)
	p := startProxy(t, Config{Listen: "127.0.0.1:0", Upstream: up.addr()})
	p.quitGrace = 200 * time.Millisecond
	pids, err := p.PIDs()
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	go tr.RoundTrip(mustRequest(t, p.URL()+"/hang")) // ends when nginx dies
	for deadline := time.Now().Add(5 * time.Second); up.requests.Load() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request did not reach the upstream")
		}
	}
	start := time.Now()
	if err := p.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if d := time.Since(start); d < p.quitGrace || d > 3*time.Second {
		t.Errorf("Close took %v: want the grace period (%v), then a kill", d, p.quitGrace)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pid %d still running after Close", pid)
		}
	}
}

// TestCloseAfterMasterDied checks that a master killed under its workers
// leaves them orphaned; Close finds them by process group, kills them, and
// reports the death.
func TestCloseAfterMasterDied(t *testing.T) {
	needNginx(t)
	up := startUpstream(t)
	p := startProxy(t, Config{Listen: "127.0.0.1:0", Upstream: up.addr(), Workers: 2})
	pids, err := p.PIDs()
	if err != nil {
		t.Fatal(err)
	}
	if err := kill(p.MasterPID()); err != nil {
		t.Fatal(err)
	}
	<-p.done
	for _, pid := range pids[1:] {
		if !alive(pid) {
			t.Fatalf("worker %d died with its master: this test proves nothing", pid)
		}
	}
	err = p.Close()
	if err == nil || !strings.Contains(err.Error(), "had exited before Close") {
		t.Errorf("Close = %v, want it to report the master's death", err)
	}
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("pid %d still running after Close", pid)
		}
	}
}

// TestProxyCPUAffinity pins two workers to two CPUs and reads back where
// the kernel lets each run.
func TestProxyCPUAffinity(t *testing.T) {
	needNginx(t)
	cpus := allowedCPUs(t)
	if len(cpus) < 2 {
		t.Skipf("this process may run on CPUs %v: need two", cpus)
	}
	up := startUpstream(t)
	p := startProxy(t, Config{Listen: "127.0.0.1:0", Upstream: up.addr(), Workers: 2, CPUAffinity: cpus[:2]})
	pids, err := p.PIDs()
	if err != nil {
		t.Fatal(err)
	}
	// A worker pins itself as it starts, which may be after the listening
	// socket (the master's) already takes connections: wait for it.
	var got map[string]bool
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		got = map[string]bool{}
		for _, pid := range pids[1:] {
			got[cpusAllowedList(t, pid)] = true
		}
		if (got[strconv.Itoa(cpus[0])] && got[strconv.Itoa(cpus[1])]) || time.Now().After(deadline) {
			break
		}
	}
	for _, cpu := range cpus[:2] {
		if !got[strconv.Itoa(cpu)] {
			t.Errorf("no worker pinned to CPU %d alone; workers' Cpus_allowed_list: %v", cpu, got)
		}
	}
}

func TestProxyTLS(t *testing.T) {
	needNginx(t)
	cert, err := tlscert.New(tlscert.RSA2048)
	if err != nil {
		t.Fatal(err)
	}
	certDir := t.TempDir()
	files := TLSFiles{Cert: filepath.Join(certDir, "tls.crt"), Key: filepath.Join(certDir, "tls.key")}
	if err := os.WriteFile(files.Cert, cert.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(files.Key, cert.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	up := startUpstream(t)
	p := startProxy(t, Config{Listen: "127.0.0.1:0", Upstream: up.addr(), TLS: &files})
	if p.URL() != "https://"+p.Addr() {
		t.Errorf("URL() = %q", p.URL())
	}

	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: cert.Pool()}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	resp, body := get(t, &http.Client{Transport: tr, Timeout: 10 * time.Second}, p.URL()+"/tls")
	if string(body) != "upstream saw /tls" {
		t.Errorf("body %q", body)
	}
	if resp.ProtoMajor != 2 {
		t.Errorf("protocol %s, want HTTP/2 (listen ... ssl http2)", resp.Proto)
	}

	// No session cache, no tickets: a client that offers to resume still
	// gets a full handshake on every connection.
	for _, v := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		cache := tls.NewLRUClientSessionCache(4)
		for i := range 3 {
			conn, err := tls.Dial("tcp", p.Addr(), &tls.Config{
				RootCAs: cert.Pool(), ClientSessionCache: cache,
				MinVersion: v, MaxVersion: v, NextProtos: []string{"http/1.1"},
			})
			if err != nil {
				t.Fatalf("%s: %v", tls.VersionName(v), err)
			}
			// One request, so that TLS 1.3 tickets (sent after the
			// handshake) would be read and stored.
			fmt.Fprint(conn, "GET /handshake HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err == nil {
				io.Copy(io.Discard, resp.Body)
			}
			st := conn.ConnectionState()
			conn.Close()
			if err != nil {
				t.Fatalf("%s: %v", tls.VersionName(v), err)
			}
			if st.DidResume {
				t.Errorf("%s connection %d resumed a session: want a full handshake every time", tls.VersionName(v), i)
			}
		}
	}
}

// TestStartNginxTFails checks that what nginx -t rejects comes back in
// Start's error, and the failed start leaves neither a process nor its run
// directory.
func TestStartNginxTFails(t *testing.T) {
	needNginx(t)
	missing := filepath.Join(t.TempDir(), "missing.crt")
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	_, err := Start(context.Background(), Config{
		Listen: "127.0.0.1:0", Upstream: "127.0.0.1:9",
		TLS: &TLSFiles{Cert: missing, Key: missing},
	})
	if err == nil {
		t.Fatal("Start with a missing certificate: no error")
	}
	for _, want := range []string{"nginx -t", "cannot load certificate", missing} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	assertNothingLeft(t, tmp)
}

// TestStartPortInUse checks that, when nginx cannot bind a port that is
// taken, Start says so in nginx's words and cleans up. (nginx retries the bind for
// 2.5s.)
func TestStartPortInUse(t *testing.T) {
	needNginx(t)
	if testing.Short() {
		t.Skip("nginx retries bind() for 2.5s")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	up := startUpstream(t)
	_, err = Start(context.Background(), Config{Listen: ln.Addr().String(), Upstream: up.addr()})
	if err == nil || !strings.Contains(err.Error(), "Address already in use") {
		t.Fatalf("Start on a taken port: %v, want nginx's bind() error", err)
	}
	assertNothingLeft(t, tmp)
}

// assertNothingLeft checks that the temp directory Start used is empty and
// that no nginx runs with a prefix in it (killing any that does).
func assertNothingLeft(t *testing.T, tmp string) {
	t.Helper()
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("failed Start left %d entries in TMPDIR, e.g. %s", len(entries), entries[0].Name())
	}
	procs, _ := os.ReadDir("/proc")
	for _, e := range procs {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if alive(pid) && bytes.Contains(cmdline, []byte(tmp)) {
			t.Errorf("nginx pid %d (%q) outlived the failed Start; killing it", pid, cmdline)
			kill(pid)
		}
	}
}

// allowedCPUs parses this process's Cpus_allowed_list.
func allowedCPUs(t *testing.T) []int {
	var cpus []int
	for _, part := range strings.Split(cpusAllowedList(t, os.Getpid()), ",") {
		lo, hi, found := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		b, err2 := a, error(nil)
		if found {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil {
			t.Fatalf("Cpus_allowed_list %q", part)
		}
		for cpu := a; cpu <= b; cpu++ {
			cpus = append(cpus, cpu)
		}
	}
	return cpus
}

func cpusAllowedList(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no Cpus_allowed_list in /proc/%d/status", pid)
	return ""
}

// TestProxyMTLS checks that with a ClientCA nginx answers a client that
// presents a certificate that CA issued, and refuses one without (400) or
// with another CA's.
func TestProxyMTLS(t *testing.T) {
	needNginx(t)
	server, err := tlscert.New(tlscert.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	issue := func() (*tlscert.Cert, *tlscert.Cert) {
		ca, err := tlscert.NewCA(tlscert.ECDSAP256, "clients")
		if err != nil {
			t.Fatal(err)
		}
		c, err := ca.Issue(tlscert.ECDSAP256, nil, "client.test")
		if err != nil {
			t.Fatal(err)
		}
		return ca, c
	}
	ca, client := issue()
	_, stranger := issue()
	dir := t.TempDir()
	files := TLSFiles{Cert: filepath.Join(dir, "tls.crt"), Key: filepath.Join(dir, "tls.key"), ClientCA: filepath.Join(dir, "client-ca.pem")}
	for f, b := range map[string][]byte{files.Cert: server.CertPEM, files.Key: server.KeyPEM, files.ClientCA: ca.CertPEM} {
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	up := startUpstream(t)
	p := startProxy(t, Config{Listen: "127.0.0.1:0", Upstream: up.addr(), TLS: &files})
	for _, tc := range []struct {
		name   string
		certs  []tls.Certificate
		status int
	}{{"with", []tls.Certificate{client.TLS}, 200}, {"without", nil, 400}, {"another CA's", []tls.Certificate{stranger.TLS}, 400}} {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: server.Pool(), Certificates: tc.certs}}
		resp, err := (&http.Client{Transport: tr, Timeout: 10 * time.Second}).Get(p.URL() + "/mtls")
		tr.CloseIdleConnections()
		if err != nil {
			t.Fatalf("%s a client certificate: %v", tc.name, err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s a client certificate: status %d, want %d", tc.name, resp.StatusCode, tc.status)
		}
	}
}
