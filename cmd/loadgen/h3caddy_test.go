package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"loadgen/internal/testport"
	"loadgen/meshes/caddy"
	"loadgen/targets/tlscert"
)

// needCaddy finds Debian's caddy; under CI its absence fails the test.
func needCaddy(t *testing.T) string {
	t.Helper()
	bin, err := caddy.Available()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("caddy is not installed: .ci/run must apt-get install caddy (%v)", err)
		}
		t.Skipf("caddy is not installed (apt-get install caddy): %v", err)
	}
	return bin
}

// startCaddyH3 runs caddy serving TLS on addr over h1, h2 and h3 (the UDP
// port of addr's number), answering 200 "ok" to everything and logging
// every request (JSON) to the returned file.
func startCaddyH3(t *testing.T, bin, addr string, cert *tlscert.Cert) (accessLog string) {
	t.Helper()
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, cert.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, cert.KeyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	accessLog = filepath.Join(dir, "access.log")
	conf := map[string]any{
		"admin": map[string]any{"disabled": true},
		"logging": map[string]any{"logs": map[string]any{
			"default": map[string]any{"level": "ERROR", "exclude": []string{"http.log.access.acc"}},
			"acc": map[string]any{
				"writer":  map[string]any{"output": "file", "filename": accessLog},
				"encoder": map[string]any{"format": "json"},
				"include": []string{"http.log.access.acc"},
			},
		}},
		"apps": map[string]any{
			"http": map[string]any{"servers": map[string]any{"s": map[string]any{
				"listen":                  []string{addr},
				"protocols":               []string{"h1", "h2", "h3"},
				"routes":                  []any{map[string]any{"handle": []any{map[string]any{"handler": "static_response", "status_code": 200, "body": "ok"}}}},
				"tls_connection_policies": []any{map[string]any{"certificate_selection": map[string]any{"any_tag": []string{"lg"}}}},
				"automatic_https":         map[string]any{"disable": true},
				"logs":                    map[string]any{"default_logger_name": "acc"},
			}}},
			"tls": map[string]any{"certificates": map[string]any{"load_files": []any{
				map[string]any{"certificate": certFile, "key": keyFile, "tags": []string{"lg"}},
			}}},
		},
	}
	b, err := json.Marshal(conf)
	if err != nil {
		t.Fatal(err)
	}
	confFile := filepath.Join(dir, "caddy.json")
	if err := os.WriteFile(confFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "run", "--config", confFile)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+dir, "XDG_CONFIG_HOME="+dir)
	out, err := os.Create(filepath.Join(dir, "caddy.out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cancel(); <-exited; out.Close() })
	// Ready once it accepts on TCP (its UDP socket is bound before: caddy
	// starts the h3 listener with the server's).
	for end := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		select {
		case <-exited:
			log, _ := os.ReadFile(out.Name())
			t.Fatalf("caddy exited:\n%s", log)
		default:
		}
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(end) {
			t.Fatal("caddy did not listen within 20s")
		}
	}
	return accessLog
}

// Against Caddy's HTTP/3 (quic-go's server in another program, configured
// by caddy): a -p h3 run succeeds, and caddy's access log has exactly the
// run's requests, every one of them HTTP/3.
func TestH3AgainstCaddy(t *testing.T) {
	bin := needCaddy(t)
	cert, err := tlscert.New(tlscert.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	addr := testport.Held(t)
	accessLog := startCaddyH3(t, bin, addr, cert)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, cert.CertPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-c", "2", "-m", "2", "-n", "400"},
		{"-c", "2", "-R", "200", "-d", "1s"},
	} {
		before := countProtos(t, accessLog)
		r := runJSON(t, append([]string{"-p", "h3", "--cacert", ca}, append(args, "https://"+addr+"/")...)...)
		// caddy logs a request once it answered it: wait for the run's
		// count of entries (or a while for more), then compare.
		var after map[string]int
		var h3, total int
		for end := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			after = countProtos(t, accessLog)
			h3, total = after["HTTP/3.0"]-before["HTTP/3.0"], 0
			for p, n := range after {
				total += n - before[p]
			}
			if int64(total) >= r.Summary.Requests || time.Now().After(end) {
				break
			}
		}
		if r.Summary.Requests == 0 || int64(h3) != r.Summary.Requests || total != h3 {
			t.Errorf("%v: loadgen counted %d requests; caddy logged %d over HTTP/3 of %d (%v)", args, r.Summary.Requests, h3, total, after)
		}
	}
}

// countProtos counts the access log's requests by protocol ("HTTP/3.0").
func countProtos(t *testing.T, file string) map[string]int {
	t.Helper()
	f, err := os.Open(file)
	if os.IsNotExist(err) {
		return map[string]int{}
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e struct {
			Request struct {
				Proto string `json:"proto"`
			} `json:"request"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Request.Proto != "" {
			n[e.Request.Proto]++
		}
	}
	return n
}
