package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"loadgen/results/store"
)

// startRedirectNginx runs a real nginx that answers every request with
// 308 to HTTPS, as ingress-nginx does for an Ingress with TLS (its
// ssl-redirect), on a listener the test opened and hands it (nginx takes
// inherited sockets from $NGINX). It returns the URL.
func startRedirectNginx(t *testing.T) string {
	t.Helper()
	needNginx(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	ln.Close() // f holds the listening socket
	dir := t.TempDir()
	conf := fmt.Sprintf(`worker_processes 1;
error_log %[1]s/error.log warn;
pid %[1]s/nginx.pid;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path %[1]s;
	server {
		listen %[2]s;
		location / { return 308 https://$host$request_uri; }
	}
}
`, dir, ln.Addr())
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	// nginx keeps inherited sockets with its master process only: the
	// master is stopped with SIGTERM, which stops its worker too. Its log
	// goes to a file, so that no worker holds a pipe of the test's.
	cmd := exec.Command("nginx", "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-g", "daemon off;")
	cmd.Env = append(os.Environ(), "NGINX=3;")
	cmd.ExtraFiles = []*os.File{f} // fd 3
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if b, _ := os.ReadFile(filepath.Join(dir, "error.log")); t.Failed() {
			t.Logf("nginx: %s", b)
		}
	})
	return "http://" + ln.Addr().String()
}

// TestRedirectsAreNotAnswers checks that a path whose every answer is nginx's
// 308 beside a baseline that answered 200 fails its step in a sweep, with one
// line naming the path, the status and its share; a run against it keeps
// wrk's exit status and counts the redirects; --ok-status 200 makes them
// errors.
func TestRedirectsAreNotAnswers(t *testing.T) {
	nginx := startRedirectNginx(t)
	direct := startHTTPBin(t)

	t.Run("sweep", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "sweep")
		code, out, stderr := cli(t, "sweep", "--path", "baseline="+direct, "--path", "nginx="+nginx,
			"--ladder", "c2t1", "--payloads", "100", "-d", "300ms", "-o", dir, "-q")
		if code != exitFail {
			t.Fatalf("exit %d, want %d\n%s%s", code, exitFail, out, stderr)
		}
		want := "nginx answered 308 to every request: the target was never reached (the baseline (baseline) answered 200)"
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s%s", want, out, stderr)
		}
		_, steps, err := store.ReadSweep(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range steps {
			switch f := st.Failure(); {
			case st.Path == "nginx" && !strings.Contains(f, want):
				t.Errorf("step %s: failure %q", st.ID, f)
			case st.Path == "baseline" && f != "":
				t.Errorf("the baseline's step %s failed: %s", st.ID, f)
			}
		}
		// The baseline after the path: the path's step, written first, is
		// failed once the baseline's has run.
		dir2 := filepath.Join(t.TempDir(), "sweep2")
		code, out, _ = cli(t, "sweep", "--path", "nginx="+nginx, "--path", "baseline="+direct,
			"--ladder", "c2t1", "--payloads", "100", "-d", "300ms", "-o", dir2, "-q")
		if code != exitFail || !strings.Contains(out, want) {
			t.Errorf("baseline last: exit %d\n%s", code, out)
		}
		if _, steps, err := store.ReadSweep(dir2); err != nil || len(steps) != 2 || !strings.Contains(steps[0].Failure(), want) {
			t.Errorf("baseline last: the path's saved step %v %v", steps, err)
		}
	})

	t.Run("run", func(t *testing.T) {
		code, out, stderr := cli(t, "run", "-q", "-c", "2", "-t", "1", "-d", "300ms", nginx+"/get")
		if code != 0 {
			t.Fatalf("exit %d (wrk's rule: a 308 is an answer)\n%s%s", code, out, stderr)
		}
		if !strings.Contains(out, "Redirects (3xx): ") || !strings.Contains(out, "(100.0%)") {
			t.Errorf("the summary does not count the redirects:\n%s", out)
		}
		js := filepath.Join(t.TempDir(), "r.json")
		code, out, _ = cli(t, "run", "-q", "-c", "2", "-t", "1", "-d", "300ms", "--ok-status", "200", "--json", js, nginx+"/get")
		if code != exitFail {
			t.Fatalf("--ok-status 200: exit %d, want %d\n%s", code, exitFail, out)
		}
		r, err := store.ReadRun(js)
		if err != nil {
			t.Fatal(err)
		}
		if s := r.Summary; s.Requests == 0 || s.Errors.Status != s.Requests || s.Status[308] != s.Requests || s.OK() != 0 || r.Config.OKStatus != "200" {
			t.Errorf("--ok-status 200: %d answers, %d status errors, statuses %v, ok_status %q", s.Requests, s.Errors.Status, s.Status, r.Config.OKStatus)
		}
		// The baseline's 200s stay successes under it; a 404 range is one.
		if code, out, _ := cli(t, "run", "-q", "-c", "1", "-t", "1", "-d", "200ms", "--ok-status", "200-299,404", direct+"/status/404"); code != 0 {
			t.Errorf("--ok-status 200-299,404 against 404s: exit %d\n%s", code, out)
		}
	})

	// Every client and driver applies it: httpbin's 204 is an error when
	// only 200 is a success, and the 200s beside it are not.
	t.Run("every client", func(t *testing.T) {
		for _, args := range [][]string{
			{"-p", "http1"}, {"-p", "http1", "--driver", "goroutines"},
			{"-p", "h2c", "-m", "4"}, {"-p", "h2c", "-m", "4", "--driver", "goroutines"}, {"-p", "h2c", "--client", "x-net"},
		} {
			for path, failed := range map[string]bool{"/status/204": true, "/get": false} {
				js := filepath.Join(t.TempDir(), "r.json")
				cli(t, append(append([]string{"run", "-q", "-c", "2", "-t", "1", "-d", "200ms", "--ok-status", "200", "--json", js}, args...), direct+path)...)
				r, err := store.ReadRun(js)
				if err != nil {
					t.Fatalf("%v %s: %v", args, path, err)
				}
				if s := r.Summary; s.Requests == 0 || (s.Errors.Status == s.Requests) != failed || (s.Errors.Status == 0) == failed {
					t.Errorf("%v %s: %d answers, %d status errors (%v)", args, path, s.Requests, s.Errors.Status, s.Status)
				}
			}
		}
	})

	t.Run("bad", func(t *testing.T) {
		for _, tc := range []struct {
			args []string
			msg  string
		}{
			{[]string{"--ok-status", "2xz"}, "--ok-status"},
			{[]string{"--ok-status", "700"}, "100 to 599"},
			{[]string{"--ok-status", "299-200"}, "ends before"},
			{[]string{"-p", "grpc", "--ok-status", "200"}, "gRPC"},
		} {
			code, _, stderr := cli(t, append(append([]string{"run", "-q", "-d", "100ms"}, tc.args...), direct+"/get")...)
			if first, _, _ := strings.Cut(stderr, "\n"); code != exitUsage || !strings.Contains(first, tc.msg) {
				t.Errorf("%v: exit %d, %q", tc.args, code, stderr)
			}
		}
	})
}
