package main

import (
	"crypto/tls"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"loadgen/results/store"
	"loadgen/targets/httpbin"
	"loadgen/targets/tlscert"
)

// tlsHTTPBin is httpbin over TLS that counts full and resumed handshakes.
func tlsHTTPBin(t *testing.T) (addr, caFile string, full, resumed *atomic.Int64) {
	t.Helper()
	cert, err := tlscert.New(tlscert.RSA2048)
	if err != nil {
		t.Fatal(err)
	}
	full, resumed = new(atomic.Int64), new(atomic.Int64)
	cfg := &tls.Config{
		Certificates: []tls.Certificate{cert.TLS},
		NextProtos:   []string{"h2", "http/1.1"},
		VerifyConnection: func(cs tls.ConnectionState) error {
			if cs.DidResume {
				resumed.Add(1)
			} else {
				full.Add(1)
			}
			return nil
		},
	}
	srv, err := httpbin.New(httpbin.Config{Addr: "127.0.0.1:0", TLS: cfg})
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
	return srv.Addr(), caFile, full, resumed
}

// --new-conn: every request pays one full TLS handshake, none resumed.
func TestHandshakesPerSecond(t *testing.T) {
	addr, ca, full, resumed := tlsHTTPBin(t)
	out := filepath.Join(t.TempDir(), "r.json")
	code, stdout, stderr := cli(t, "run", "-q", "--new-conn", "--cacert", ca, "-c", "4", "-n", "200", "--json", out, "https://"+addr+"/get")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := store.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	// The preflight's handshake checks the target before the load (its
	// connection is closed: every request makes its own handshake).
	if r.Summary.Requests != 200 || full.Load() != 201 || resumed.Load() != 0 {
		t.Errorf("%d requests, %d full handshakes, %d resumed; want 200, 201 (the preflight's and each request's), 0", r.Summary.Requests, full.Load(), resumed.Load())
	}
	if c := r.Summary.Connections; c.Measured != 200 || c.Established != 200 {
		t.Errorf("connections %+v: want 200 opened by the requests", c)
	}
	if r.Summary.Connect == nil || r.Summary.Connect.Count != 200 {
		t.Errorf("connect+handshake histogram: %+v", r.Summary.Connect)
	}
	if !strings.Contains(stdout, "TLS handshakes/sec:") {
		t.Errorf("no handshakes/s line:\n%s", stdout)
	}
	// With --tls-resume, handshakes after the first may resume.
	full.Store(0)
	code, _, stderr = cli(t, "run", "-q", "--new-conn", "--tls-resume", "--tls-version", "1.2", "--cacert", ca, "-c", "1", "-n", "50", "https://"+addr+"/get")
	if code != 0 || resumed.Load() == 0 {
		t.Errorf("--tls-resume: exit %d, %d resumed handshakes (want some): %s", code, resumed.Load(), stderr)
	}
}

func TestCertificateVerification(t *testing.T) {
	addr, ca, _, _ := tlsHTTPBin(t)
	url := "https://" + addr + "/get"
	for _, p := range []string{"http1", "h2"} {
		code, _, stderr := cli(t, "run", "-p", p, "-n", "10", url)
		if code != exitFail || !strings.Contains(stderr, "--insecure") || !strings.Contains(stderr, "--cacert") {
			t.Errorf("-p %s without trust: exit %d, %q; want 1 and a hint naming --insecure and --cacert", p, code, stderr)
		}
		if code, _, stderr := cli(t, "run", "-q", "-p", p, "-n", "10", "-k", url); code != 0 {
			t.Errorf("-p %s --insecure: exit %d %s", p, code, stderr)
		}
		if code, _, stderr := cli(t, "run", "-q", "-p", p, "-n", "10", "--cacert", ca, url); code != 0 {
			t.Errorf("-p %s --cacert: exit %d %s", p, code, stderr)
		}
	}
	if code, _, stderr := cli(t, "run", "-q", "-n", "10", "--cacert", ca, "--sni", "wrong.example", url); code != exitFail || !strings.Contains(stderr, "--sni") {
		t.Errorf("wrong --sni: exit %d, %q", code, stderr)
	}
}
