package main

import (
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"loadgen/targets/httpbin"
	"loadgen/targets/tlscert"
)

// h3HTTPBin is loadgen's httpbin over TLS, with HTTP/3 on the UDP port of
// the same number when h3, counting the TLS handshakes it completed (TCP's
// and QUIC's alike).
func h3HTTPBin(t *testing.T, h3 bool) (srv *httpbin.Server, caFile string, handshakes *atomic.Int64) {
	t.Helper()
	cert, err := tlscert.New(tlscert.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	handshakes = new(atomic.Int64)
	cfg := &tls.Config{
		Certificates: []tls.Certificate{cert.TLS},
		NextProtos:   []string{"h2", "http/1.1"},
		VerifyConnection: func(tls.ConnectionState) error {
			handshakes.Add(1)
			return nil
		},
	}
	srv, err = httpbin.New(httpbin.Config{Addr: "127.0.0.1:0", TLS: cfg, HTTP3: h3})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, cert.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	return srv, caFile, handshakes
}

// -p h3 against loadgen's own httpbin, closed and open loop: the run counts
// exactly what the target served, and its connections are the QUIC
// handshakes the target completed, -m requests sharing each.
func TestH3CountsWhatHTTPBinServed(t *testing.T) {
	srv, ca, handshakes := h3HTTPBin(t, true)
	url := "https://" + srv.Addr() + "/get"
	cases := []struct {
		name string
		args []string
	}{
		{"closed", []string{"-c", "3", "-m", "2", "-n", "600"}},
		{"open", []string{"-c", "3", "-m", "2", "-R", "400", "-d", "1s"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before, shaken := srv.Served(), handshakes.Load()
			r := runJSON(t, append([]string{"-p", "h3", "--cacert", ca}, append(tc.args, url)...)...)
			served := srv.Served() - before
			if r.Summary.Requests == 0 || uint64(r.Summary.Requests) != served {
				t.Errorf("loadgen counted %d requests, httpbin served %d over HTTP/3", r.Summary.Requests, served)
			}
			if r.Config.Protocol != "h3" || r.Summary.Status[200] != r.Summary.Requests {
				t.Errorf("protocol %q, statuses %v", r.Config.Protocol, r.Summary.Status)
			}
			hs := handshakes.Load() - shaken
			if c := r.Summary.Connections; c.Established != 3 || hs != 3 {
				t.Errorf("%d connections established, %d handshakes at the target; want 3 (-c 3) each", c.Established, hs)
			}
			if r.Summary.Connect == nil || r.Summary.Connect.Count == 0 {
				t.Errorf("no connect histogram: %+v", r.Summary.Connect)
			}
			if tc.name == "open" && (r.Summary.Pacing == nil || r.Summary.Uncorrected == nil) {
				t.Errorf("open loop: no pacing or uncorrected latency: %+v", r.Summary.Pacing)
			}
		})
	}
}

// --0rtt with a new connection per request: every connection after the
// first resumes and may send in 0-RTT, and the counts still match the
// target's, one QUIC handshake per request.
func TestH3ZeroRTTNewConn(t *testing.T) {
	srv, ca, handshakes := h3HTTPBin(t, true)
	before, shaken := srv.Served(), handshakes.Load()
	r := runJSON(t, "-p", "h3", "--0rtt", "--new-conn", "--cacert", ca, "-c", "2", "-n", "100", "https://"+srv.Addr()+"/get")
	if served := srv.Served() - before; r.Summary.Requests != 100 || served != 100 {
		t.Errorf("loadgen counted %d requests, httpbin served %d; want 100", r.Summary.Requests, served)
	}
	// the preflight's connection, then one per request
	if c, hs := r.Summary.Connections, handshakes.Load()-shaken; c.Established != 100 || hs != 101 {
		t.Errorf("%d connections established, %d handshakes at the target; want 100 and 101 (the preflight's too)", c.Established, hs)
	}
	if !r.Config.ZeroRTT {
		t.Error("the result does not record --0rtt (config.zero_rtt)")
	}
}

// httpbin's answers over TCP advertise its HTTP/3 (Alt-Svc), only when it
// serves it.
func TestHTTPBinAdvertisesH3(t *testing.T) {
	for _, h3 := range []bool{true, false} {
		srv, ca, _ := h3HTTPBin(t, h3)
		pem, err := os.ReadFile(ca)
		if err != nil {
			t.Fatal(err)
		}
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pem)
		c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
		resp, err := c.Get("https://" + srv.Addr() + "/get")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		_, port, _ := net.SplitHostPort(srv.Addr())
		want := ""
		if h3 {
			want = `h3=":` + port + `"; ma=86400`
		}
		if got := resp.Header.Get("Alt-Svc"); got != want {
			t.Errorf("HTTP3 %v: Alt-Svc %q, want %q", h3, got, want)
		}
		c.CloseIdleConnections()
	}
}

// A server that serves TLS over TCP only (h2 and HTTP/1.1, no QUIC on the
// UDP port): one line saying it does not speak HTTP/3, within --timeout.
func TestH3AgainstH2OnlyServer(t *testing.T) {
	srv, ca, _ := h3HTTPBin(t, false)
	code, _, stderr := cli(t, "run", "-q", "-p", "h3", "--cacert", ca, "--timeout", "500ms", "-n", "10", "https://"+srv.Addr()+"/get")
	if code != exitFail || !strings.Contains(stderr, "does not speak HTTP/3") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("exit %d, stderr %q; want %d and one line saying it does not speak HTTP/3", code, stderr, exitFail)
	}
}

// Bad input: -p h3 takes https:// only, and refuses what QUIC cannot do.
func TestH3BadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-p", "h3", "http://127.0.0.1:1/get"}, "use an https:// URL"},
		{[]string{"-p", "h3", "--tls-version", "1.2", "https://127.0.0.1:1/get"}, "QUIC needs TLS 1.3"},
		{[]string{"-p", "h3", "--client", "x-net", "https://127.0.0.1:1/get"}, "not -p h3"},
		{[]string{"-p", "h2", "--0rtt", "https://127.0.0.1:1/get"}, "use it with -p h3"},
		{[]string{"-p", "h3", "--0rtt", "--body", "x", "https://127.0.0.1:1/post"}, "GET and HEAD only"},
	} {
		code, _, stderr := cli(t, append([]string{"run", "-q", "-n", "1"}, tc.args...)...)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != exitUsage || !strings.Contains(first, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and a line saying %q", tc.args, code, stderr, exitUsage, tc.want)
		}
	}
}
