package main

import (
	"crypto/tls"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"loadgen/results/store"
	"loadgen/targets/grpcecho"
	"loadgen/targets/httpbin"
	"loadgen/targets/tlscert"
)

// clientPKI is a client CA and files under a test's directory: the CA
// (ca.pem), a certificate it issued (client.pem, client.key), and one
// from another CA (stranger.pem, stranger.key).
type clientPKI struct {
	dir                       string
	ca, cert, key             string
	strangerCert, strangerKey string
}

func newClientPKI(t *testing.T) clientPKI {
	t.Helper()
	dir := t.TempDir()
	p := clientPKI{dir: dir, ca: filepath.Join(dir, "ca.pem"), cert: filepath.Join(dir, "client.pem"), key: filepath.Join(dir, "client.key"),
		strangerCert: filepath.Join(dir, "stranger.pem"), strangerKey: filepath.Join(dir, "stranger.key")}
	issue := func(certFile, keyFile, caFile string) {
		ca, err := tlscert.NewCA(tlscert.ECDSAP256, "loadgen test clients")
		if err != nil {
			t.Fatal(err)
		}
		c, err := ca.Issue(tlscert.ECDSAP256, nil, "client.test")
		if err != nil {
			t.Fatal(err)
		}
		for f, b := range map[string][]byte{certFile: c.CertPEM, keyFile: c.KeyPEM, caFile: ca.CertPEM} {
			if f == "" {
				continue
			}
			if err := os.WriteFile(f, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	issue(p.cert, p.key, p.ca)
	issue(p.strangerCert, p.strangerKey, "")
	return p
}

// mtlsTargets starts httpbin and the gRPC echo with serve's TLS flags and
// --client-ca: they require a client certificate from pki's CA. It
// returns their addresses, the server CA file, and the count of
// handshakes that came with a verified client certificate.
func mtlsTargets(t *testing.T, pki clientPKI) (httpAddr, grpcAddr, serverCA string, verified *atomic.Int64) {
	t.Helper()
	serverCA = filepath.Join(pki.dir, "server-ca.pem")
	st := tlscert.ServerOptions{TLS: true, KeyType: "ecdsa", WriteCA: serverCA, ClientCA: pki.ca}
	verified = new(atomic.Int64)
	count := func(c *tls.Config) *tls.Config {
		c.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.VerifiedChains) > 0 {
				verified.Add(1)
			}
			return nil
		}
		return c
	}
	hc, err := st.Config("h2", "http/1.1")
	if err != nil {
		t.Fatal(err)
	}
	if hc.ClientAuth != tls.RequireAndVerifyClientCert {
		t.Fatalf("--client-ca: ClientAuth %v, want RequireAndVerifyClientCert", hc.ClientAuth)
	}
	srv, err := httpbin.New(httpbin.Config{Addr: "127.0.0.1:0", TLS: count(hc)})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	st.WriteCA = ""
	gc, err := st.Config("h2")
	if err != nil {
		t.Fatal(err)
	}
	// The same server certificate for both: one --cacert.
	gc.Certificates = hc.Certificates
	g, err := grpcecho.New(grpcecho.Config{Addr: "127.0.0.1:0", TLS: count(gc)})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return srv.Addr(), g.Addr(), serverCA, verified
}

// TestClientCertificates checks that a target that requires client
// certificates (serve --client-ca) answers loadgen's http1, h2 and grpc on
// both drivers with --cert/--key, and a run without them, or with a
// certificate from another CA, fails saying what to do.
func TestClientCertificates(t *testing.T) {
	pki := newClientPKI(t)
	httpAddr, grpcAddr, serverCA, verified := mtlsTargets(t, pki)
	for _, p := range []struct{ proto, target string }{
		{"http1", "https://" + httpAddr + "/get"},
		{"h2", "https://" + httpAddr + "/get"},
		{"grpc", grpcAddr},
	} {
		for _, driver := range []string{"goroutines", "loop"} {
			t.Run(p.proto+"/"+driver, func(t *testing.T) {
				base := []string{"run", "-q", "-p", p.proto, "--driver", driver, "-c", "2", "-n", "40", "--cacert", serverCA}
				if p.proto == "grpc" {
					base = append(base, "--tls")
				}
				before := verified.Load()
				code, _, stderr := cli(t, append(base, "--cert", pki.cert, "--key", pki.key, p.target)...)
				if code != 0 {
					t.Fatalf("with --cert/--key: exit %d: %s", code, stderr)
				}
				if verified.Load() == before {
					t.Errorf("with --cert/--key: the target verified no client certificate")
				}
				code, _, stderr = cli(t, append(base, p.target)...)
				if code != exitFail || !strings.Contains(stderr, "requires a client certificate") || !strings.Contains(stderr, "--cert FILE --key FILE") {
					t.Errorf("without --cert: exit %d, %q; want %d and a line naming --cert FILE --key FILE", code, stderr, exitFail)
				}
				code, _, stderr = cli(t, append(base, "--cert", pki.strangerCert, "--key", pki.strangerKey, p.target)...)
				if code != exitFail || !strings.Contains(stderr, "refused the client certificate") {
					t.Errorf("a certificate from another CA: exit %d, %q; want %d and a line saying the server refused it", code, stderr, exitFail)
				}
			})
		}
	}
	// TLS 1.2: the server refuses in the handshake, before the load.
	code, _, stderr := cli(t, "run", "-q", "--tls-version", "1.2", "-n", "10", "--cacert", serverCA, "https://"+httpAddr+"/get")
	if code != exitFail || !strings.Contains(stderr, "--cert FILE --key FILE") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("TLS 1.2 without --cert: exit %d, %q; want %d and one line naming --cert FILE --key FILE", code, stderr, exitFail)
	}
}

// TestClientCertificateBadInput checks that what is wrong with the
// certificate options is one line and the usage status, before any
// connection.
func TestClientCertificateBadInput(t *testing.T) {
	pki := newClientPKI(t)
	httpAddr, _, serverCA, _ := mtlsTargets(t, pki)
	url := "https://" + httpAddr + "/get"
	missing := filepath.Join(pki.dir, "missing.key")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no key", []string{"--cert", pki.cert, url}, "holds no private key: give the key with --key FILE"},
		{"key file missing", []string{"--cert", pki.cert, "--key", missing, url}, "--key: open " + missing},
		{"key without cert", []string{"--key", pki.key, url}, "without --cert FILE"},
		{"key not the cert's", []string{"--cert", pki.cert, "--key", pki.strangerKey, url}, "private key does not match public key"},
		{"key as cert", []string{"--cert", pki.key, "--key", pki.key, url}, "no PEM certificate found"},
		{"plaintext target", []string{"--cert", pki.cert, "--key", pki.key, "http://" + httpAddr + "/get"}, "use an https:// URL or --tls"},
		{"plaintext grpc", []string{"-p", "grpc", "--cert", pki.cert, "--key", pki.key, "127.0.0.1:1"}, "use an https:// URL or --tls"},
		{"p12 and pem", []string{"--cert-p12", pki.cert, "--cert", pki.cert, "--key", pki.key, url}, "not both"},
		{"password without p12", []string{"--cert-p12-password", "x", url}, "without --cert-p12 FILE"},
		{"not p12", []string{"--cert-p12", pki.cert, url}, "not a PKCS#12 bundle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := cli(t, append([]string{"run", "-q", "-n", "5", "--cacert", serverCA}, tc.args...)...)
			first, _, _ := strings.Cut(stderr, "\n")
			if code != exitUsage || !strings.Contains(first, tc.want) {
				t.Errorf("exit %d, %q; want %d and a first line with %q", code, stderr, exitUsage, tc.want)
			}
		})
	}
}

// TestClientCertificateP12 checks that a PKCS#12 bundle (OpenSSL's legacy
// export, which x/crypto reads) loads with its password from the flag or the
// environment; a wrong password and OpenSSL 3's default AES export are
// one line each saying what to do.
func TestClientCertificateP12(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("openssl not installed: .ci/run must install it")
		}
		t.Skip(err)
	}
	pki := newClientPKI(t)
	httpAddr, _, serverCA, verified := mtlsTargets(t, pki)
	url := "https://" + httpAddr + "/get"
	export := func(name string, extra ...string) string {
		out := filepath.Join(pki.dir, name)
		args := append([]string{"pkcs12", "-export", "-in", pki.cert, "-inkey", pki.key, "-certfile", pki.ca, "-passout", "pass:s3cret", "-out", out}, extra...)
		if b, err := exec.Command(openssl, args...).CombinedOutput(); err != nil {
			t.Fatalf("openssl %s: %v: %s", strings.Join(args, " "), err, b)
		}
		return out
	}
	legacy, aes := export("legacy.p12", "-legacy"), export("aes.p12")
	base := []string{"run", "-q", "-n", "20", "--cacert", serverCA}
	before := verified.Load()
	if code, _, stderr := cli(t, append(base, "--cert-p12", legacy, "--cert-p12-password", "s3cret", url)...); code != 0 {
		t.Fatalf("--cert-p12: exit %d: %s", code, stderr)
	}
	if verified.Load() == before {
		t.Errorf("--cert-p12: the target verified no client certificate")
	}
	t.Setenv("LOADGEN_CERT_P12_PASSWORD", "s3cret")
	if code, _, stderr := cli(t, append(base, "--cert-p12", legacy, url)...); code != 0 {
		t.Errorf("--cert-p12 with LOADGEN_CERT_P12_PASSWORD: exit %d: %s", code, stderr)
	}
	for _, tc := range []struct {
		file, password, want string
	}{
		{legacy, "wrong", "wrong password"},
		{aes, "s3cret", "openssl pkcs12 -export -legacy"},
	} {
		code, _, stderr := cli(t, append(base, "--cert-p12", tc.file, "--cert-p12-password", tc.password, url)...)
		first, _, _ := strings.Cut(stderr, "\n")
		if code != exitUsage || !strings.Contains(first, tc.want) {
			t.Errorf("--cert-p12 %s: exit %d, %q; want %d and a line with %q", filepath.Base(tc.file), code, stderr, exitUsage, tc.want)
		}
	}
}

// TestSweepClientCertificates checks that a sweep path's cert and key reach
// its steps, as cacert does: the path with them is answered by a target that
// requires a client certificate, the one without fails; and a path's
// certificate options are checked before any step.
func TestSweepClientCertificates(t *testing.T) {
	pki := newClientPKI(t)
	httpAddr, _, serverCA, verified := mtlsTargets(t, pki)
	url := "https://" + httpAddr
	file := filepath.Join(pki.dir, "s.yaml")
	spec := "paths:\n  - name: mtls\n    url: " + url + "\n    cacert: " + serverCA + "\n    cert: " + pki.cert + "\n    key: " + pki.key +
		"\n  - name: nocert\n    url: " + url + "\n    cacert: " + serverCA + "\nladder: c1t1\npayloads: [100]\nduration: 200ms\nwarmup: 0s\n"
	if err := os.WriteFile(file, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	before := verified.Load()
	code, out, stderr := cli(t, "sweep", "-f", file, "-o", filepath.Join(pki.dir, "out"), "-q")
	if code != exitFail || !strings.Contains(out, "1 of 2 steps failed: nocert_c1t1_100B_closed_r1") {
		t.Fatalf("exit %d, want %d with the nocert step failed alone:\n%s%s", code, exitFail, out, stderr)
	}
	if verified.Load() == before {
		t.Errorf("the mtls path presented no client certificate")
	}
	for _, tc := range []struct{ edit, want string }{
		{strings.Replace(spec, "    key: "+pki.key, "    key: "+pki.strangerKey, 1), "private key does not match public key"},
		{strings.Replace(spec, "    key: "+pki.key+"\n", "", 1), "holds no private key"},
		{strings.Replace(spec, "url: "+url+"\n    cacert: "+serverCA+"\n    cert:", "url: http://"+httpAddr+"\n    cert:", 1), "apply to https:// URLs"},
	} {
		os.WriteFile(file, []byte(tc.edit), 0o644)
		code, _, stderr := cli(t, "sweep", "-f", file, "--dry-run")
		if code != exitUsage || !strings.Contains(stderr, "mtls") || !strings.Contains(stderr, tc.want) {
			t.Errorf("exit %d, %q; want %d naming the path mtls and %q", code, stderr, exitUsage, tc.want)
		}
	}
}

// TestK8sRunClientCertificates checks that a sweep path's cert and key go to
// the workers of `k8s run` in the run's Secret, mounted in the first step's
// Job, and its `loadgen run` names the mounted files; the dry run prints
// neither key nor certificate.
func TestK8sRunClientCertificates(t *testing.T) {
	pki := newClientPKI(t)
	sw := filepath.Join(pki.dir, "sweep.yaml")
	spec := "paths:\n  - name: mtls\n    url: https://target:8443\n    insecure: true\n    cert: " + pki.cert + "\n    key: " + pki.key +
		"\nladder: c2t2\npayloads: [100]\nduration: 5s\n"
	if err := os.WriteFile(sw, []byte(spec), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, "k8s", "run", "-f", sw, "--dry-run", "--run-id", "dry")
	if code != 0 {
		t.Fatalf("dry run: exit %d %s", code, errOut)
	}
	for _, want := range []string{"kind: Secret", "name: loadgen-client-cert", "path0.crt", "path0.key", "secretName: loadgen-client-cert",
		"mountPath: /etc/loadgen/client-cert", "- --cert\n", "- /etc/loadgen/client-cert/path0.crt", "- /etc/loadgen/client-cert/path0.key"} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
	certPEM, _ := os.ReadFile(pki.cert)
	keyPEM, _ := os.ReadFile(pki.key)
	for _, secret := range [][]byte{certPEM, keyPEM} {
		if b64 := base64.StdEncoding.EncodeToString(secret); strings.Contains(out, b64[:40]) || strings.Contains(out, string(secret[30:70])) {
			t.Errorf("the dry run prints a path's certificate or key:\n%s", out)
		}
	}
}

// TestSizeMTLS checks that `size --mtls` sizes mutual TLS: the TLS nginx
// requires a client certificate (an answer without one is a 400, an error)
// and every request of its step presents the one made for the run.
func TestSizeMTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts two nginx instances; not with -short")
	}
	needNginx(t)
	t.Setenv("LOADGEN_TEST_AS_CLI", "1") // size runs this binary as `loadgen serve httpbin`
	dir := filepath.Join(t.TempDir(), "size")
	code, out, stderr := cli(t, "size", "--workers", "1", "--mtls", "--key-type", "ecdsa", "--ladder", "c4t2", "-d", "500ms", "--warmup", "100ms", "-o", dir, "-q")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "nginx requires and verifies the load's client certificate") {
		t.Errorf("the sizing does not say it was mutual TLS:\n%s", out)
	}
	_, steps, err := store.ReadSweep(dir)
	if err != nil {
		t.Fatal(err)
	}
	tlsSteps := 0
	for _, st := range steps {
		if st.Run == nil || !st.Run.Config.TLS {
			continue
		}
		tlsSteps++
		if s := st.Run.Summary; s.Requests == 0 || s.Errors.Total() != 0 {
			t.Errorf("step %s: %d requests, errors %+v: want every mutual TLS handshake to pass", st.ID, s.Requests, s.Errors)
		}
	}
	if tlsSteps != 1 {
		t.Errorf("%d TLS steps, want 1", tlsSteps)
	}
}
