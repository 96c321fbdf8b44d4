package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"loadgen/internal/testport"
	"loadgen/results/store"
)

// silentListener accepts connections on 127.0.0.1 and never answers: a
// target whose TLS handshake, HTTP/2 SETTINGS or gRPC reflection never
// comes. accepted is closed once it took a first connection.
func silentListener(t *testing.T) (addr string, accepted <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	first := make(chan struct{})
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		var once sync.Once
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			once.Do(func() { close(first) })
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String(), first
}

// startCLI runs the command line in-process under ctx.
func startCLI(ctx context.Context, args ...string) (done <-chan int, stdout, stderr *syncBuffer) {
	var out, errb syncBuffer
	ch := make(chan int, 1)
	go func() { ch <- execute(ctx, args, &out, &errb) }()
	return ch, &out, &errb
}

func waitExit(t *testing.T, done <-chan int, within time.Duration) int {
	t.Helper()
	select {
	case code := <-done:
		return code
	case <-time.After(within):
		t.Fatalf("the command did not end within %v", within)
		return -1
	}
}

// Ctrl-C during --prometheus-hold ends the hold and leaves the exit
// status the finished run's verdict's, as lingering never changes it
// (--ui-linger, a sweep's hold): 0, 1, 99 — never 130, which it was
// before. What was printed and written stays. The process gets a real
// SIGINT once it says it holds.
func TestRunPrometheusHoldInterrupted(t *testing.T) {
	base := startHTTPBin(t)
	for _, tc := range []struct {
		name string
		args []string
		want int
	}{
		{"a good run", []string{base + "/get"}, exitOK},
		{"a failed run", []string{base + "/status/503"}, exitFail},
		{"a breached assertion", []string{"--assert", "p50<1ns", base + "/get"}, exitBreached},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jsonPath := filepath.Join(t.TempDir(), "out.json")
			args := append([]string{"run", "-q", "-c", "1", "-t", "1", "-d", "500ms", "--json", jsonPath,
				"--prometheus", "127.0.0.1:0", "--prometheus-hold", "1h"}, tc.args...)
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(os.Environ(), "LOADGEN_TEST_AS_CLI=1")
			var out, errb syncBuffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan struct{})
			var waitErr error
			go func() { waitErr = cmd.Wait(); close(exited) }()
			t.Cleanup(func() { cmd.Process.Kill(); <-exited })
			waitFor(t, "the hold's line on stderr", func() bool {
				return strings.Contains(errb.String(), "--prometheus-hold: serving the final figures")
			})
			cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				t.Fatalf("still holding 10 s after Ctrl-C; stderr %s", errb.String())
			}
			if code := exitCode(waitErr); code != tc.want {
				t.Errorf("exit %d, want %d (the run's verdict's); stderr %s", code, tc.want, errb.String())
			}
			if !strings.Contains(out.String(), "Requests/sec:") {
				t.Errorf("summary missing:\n%s", out.String())
			}
			if run, err := store.ReadRun(jsonPath); err != nil || run.Summary.Requests == 0 {
				t.Errorf("--json after the hold was interrupted: %v", err)
			}
		})
	}
}

// Ctrl-C while the connections are still opening is an interrupt (exit
// 130), not a target that failed to connect (exit 1, blaming it).
func TestRunInterruptedWhileConnecting(t *testing.T) {
	for _, tc := range []struct {
		name string
		args func(addr string) []string
	}{
		{"TLS handshake", func(a string) []string { return []string{"-k", "https://" + a + "/get"} }},
		{"h2c SETTINGS", func(a string) []string { return []string{"-p", "h2c", "http://" + a + "/get"} }},
		{"gRPC", func(a string) []string { return []string{"-p", "grpc", a} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, accepted := silentListener(t)
			junit := filepath.Join(t.TempDir(), "junit.xml")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			args := append([]string{"run", "-q", "-d", "5s", "--timeout", "20s", "--junit", junit}, tc.args(addr)...)
			done, _, errb := startCLI(ctx, args...)
			select {
			case <-accepted:
			case <-time.After(5 * time.Second):
				t.Fatal("loadgen never connected")
			}
			cancel() // the listener never answers: loadgen is still connecting
			code := waitExit(t, done, 5*time.Second)
			stderr := errb.String()
			if code != 130 {
				t.Errorf("exit %d, want 130; stderr %s", code, stderr)
			}
			if !strings.Contains(stderr, "interrupted before the load started") {
				t.Errorf("stderr %q does not say the run was interrupted before its load", stderr)
			}
			for _, blame := range []string{"cannot connect", "SETTINGS", "gRPC server", "context canceled"} {
				if strings.Contains(stderr, blame) {
					t.Errorf("stderr blames the target (%q): %s", blame, stderr)
				}
			}
			said := false
			for _, s := range chkReadJUnit(t, junit).Suites {
				for _, c := range s.Cases {
					said = said || (c.Failure != nil && strings.Contains(c.Failure.Message, "interrupted before the load started"))
				}
			}
			if !said {
				t.Errorf("the JUnit report does not fail the run as interrupted")
			}
		})
	}
}

// --driver loop for what the loop cannot drive is a usage error, refused
// before the header, naming what and the way out.
func TestRunDriverLoopRefused(t *testing.T) {
	for _, tc := range []struct {
		name, what string
		args       []string
	}{
		{"grpc over --netns", "from --netns", []string{"-p", "grpc", "--netns", "/proc/self/ns/net", testport.Closed(t)}},
		{"--new-conn over TLS", "--new-conn over TLS", []string{"--new-conn", "-k", "https://" + testport.Closed(t) + "/"}},
		{"--new-conn over h2c", "--new-conn over HTTP/2", []string{"--new-conn", "-p", "h2c", "http://" + testport.Closed(t) + "/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := cli(t, append([]string{"run", "-d", "1s", "--driver", "loop"}, tc.args...)...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr %s", code, exitUsage, stderr)
			}
			if out != "" {
				t.Errorf("output before the refusal:\n%s", out)
			}
			first := strings.SplitN(stderr, "\n", 2)[0]
			for _, want := range []string{"--driver loop cannot drive", tc.what, "--driver goroutines", "leave out --driver"} {
				if !strings.Contains(first, want) {
					t.Errorf("first line %q lacks %q", first, want)
				}
			}
		})
	}
}

// --junit is checked before any load, as --json and --hlog are.
func TestRunJUnitCheckedBeforeLoad(t *testing.T) {
	dir := t.TempDir() // a directory is no file to write
	srv := startHTTPBinServer(t)
	code, out, stderr := cli(t, "run", "-d", "1s", "--junit", dir, "http://"+srv.Addr()+"/get")
	if code != exitUsage || !strings.Contains(stderr, "--junit") {
		t.Errorf("exit %d, stderr %q: want %d naming --junit", code, stderr, exitUsage)
	}
	if out != "" || srv.Served() != 0 {
		t.Errorf("load sent before the refusal (%d requests):\n%s", srv.Served(), out)
	}
}

// An --hlog file is replaced only by a run that measured something: a run
// that fails, or is interrupted, before its start leaves it as it was, and
// no temporary file behind.
func TestRunHlogKeptWhenRunFails(t *testing.T) {
	dir := t.TempDir()
	hlog := filepath.Join(dir, "keep.hlog")
	if err := os.WriteFile(hlog, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	unchanged := func(when string) {
		t.Helper()
		if b, err := os.ReadFile(hlog); err != nil || string(b) != "old\n" {
			t.Errorf("%s: keep.hlog is now %q (%v)", when, b, err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 1 {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Errorf("%s: the directory holds %v, want keep.hlog alone", when, names)
		}
	}
	code, _, stderr := cli(t, "run", "-d", "1s", "--hlog", hlog, "--json", filepath.Join(dir, "keep.json"), "http://"+testport.Closed(t)+"/")
	if code != exitFail {
		t.Errorf("unreachable target: exit %d, want 1; %s", code, stderr)
	}
	unchanged("target unreachable")

	addr, accepted := silentListener(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done, _, _ := startCLI(ctx, "run", "-q", "-d", "5s", "--timeout", "20s", "--hlog", hlog, "-k", "https://"+addr+"/")
	<-accepted
	cancel()
	waitExit(t, done, 5*time.Second)
	unchanged("interrupted while connecting")

	code, _, stderr = cli(t, "run", "-c", "1", "-t", "1", "-d", "300ms", "--hlog", hlog, startHTTPBin(t)+"/get")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(hlog)
	if err != nil || !strings.Contains(string(b), "HISTF") {
		t.Errorf("a run that measured did not replace keep.hlog: %v\n%s", err, b)
	}
	if st, err := os.Stat(hlog); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("keep.hlog: %v, mode %v, want 0644", err, st.Mode())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("temporary files left: %v", ents)
	}
}

// What `loadgen run` refuses before any load: outputs that collide, TLS
// versions its clients do not speak, a URL without a host name, and an
// out-of-range port whether the target has its http:// or not.
func TestRunRefusesBeforeLoad(t *testing.T) {
	dir := t.TempDir()
	same := filepath.Join(dir, "out")
	url := startHTTPBin(t) + "/get"
	https := "https://" + testport.Closed(t) + "/"
	_, port, _ := net.SplitHostPort(testport.Closed(t)) // should a host name be missed, nothing listens there
	_, _, portErr := cli(t, "run", "-d", "1s", "http://127.0.0.1:99999/get")
	portErr = strings.SplitN(portErr, "\n", 2)[0]
	for _, tc := range []struct {
		name string
		args []string
		msg  string
	}{
		{"--json and --hlog one file", []string{"--json", same, "--hlog", same, url}, "--json and --hlog both name " + same},
		{"--json and --junit one file", []string{"--json", same, "--junit", filepath.Join(dir, ".", "out"), url}, "--json and --junit both name"},
		{"--tls-version 1.0", []string{"--tls-version", "1.0", "-k", https}, "use 1.2 or 1.3"},
		{"--tls-version 1.1", []string{"--tls-version", "tls1.1", "-k", https}, "use 1.2 or 1.3"},
		{"no host name", []string{"http://:" + port + "/"}, `URL "http://:` + port + `/" has no host name`},
		{"no host name over TLS", []string{"-k", "https://:" + port + "/get"}, "has no host name"},
		{"port out of range without a scheme", []string{"127.0.0.1:99999/get"}, strings.TrimPrefix(portErr, "loadgen: ")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, stderr := cli(t, append([]string{"run", "-d", "1s"}, tc.args...)...)
			first := strings.SplitN(stderr, "\n", 2)[0]
			if code != exitUsage || !strings.Contains(first, tc.msg) {
				t.Errorf("exit %d, first line %q: want %d and %q", code, first, exitUsage, tc.msg)
			}
			if out != "" {
				t.Errorf("output before the refusal:\n%s", out)
			}
		})
	}
	if !strings.Contains(portErr, `port "99999" out of range`) {
		t.Errorf("http://127.0.0.1:99999/get: %q", portErr)
	}
}

// A second Ctrl-C ends the process at once (exit 130), whatever the first
// left it waiting for: here a --call's reflection against a server that
// never answers, which waits out its --timeout.
func TestRunSecondInterruptExits(t *testing.T) {
	addr, accepted := silentListener(t)
	cmd, _, errb := cliProcess(t, "run", "-d", "1s", "--timeout", "30s", "-p", "grpc", "--call", "pkg.Svc/Method", addr)
	select {
	case <-accepted:
	case <-time.After(10 * time.Second):
		t.Fatal("loadgen never connected")
	}
	// Ctrl-C until the process exits: two signals sent back to back may
	// reach it as one (a pending signal is not queued twice), and no sleep
	// can say when it has taken the first. The exit must be the second's.
	t0 := time.Now()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	giveUp := time.After(10 * time.Second)
	for sent := 0; ; {
		if sent < 100 {
			cmd.Process.Signal(syscall.SIGINT)
			sent++
		}
		select {
		case err := <-exited:
			if code := exitCode(err); code != 130 {
				t.Errorf("exit %d, want 130; stderr %s", code, errb.String())
			}
			if !strings.Contains(errb.String(), "interrupted again: exiting now") {
				t.Errorf("the exit is not the second Ctrl-C's; stderr %s", errb.String())
			}
			if took := time.Since(t0); took > 5*time.Second {
				t.Errorf("exited %v after the first Ctrl-C", took)
			}
			return
		case <-giveUp:
			cmd.Process.Kill()
			<-exited
			t.Fatalf("still running 10 s after Ctrl-C")
		case <-tick.C:
		}
	}
}

// SIGTERM (a pod deleted, a CI job cancelled) stops a run as Ctrl-C does,
// with what was measured printed, and exits 143 as a shell reports it.
func TestRunSIGTERMExits143(t *testing.T) {
	srv := startHTTPBinServer(t)
	cmd, out, errb := cliProcess(t, "run", "-c", "2", "-t", "1", "-d", "30s", "http://"+srv.Addr()+"/get")
	// SIGTERM once the load is on (the process has its signal handler
	// and something measured), not 700 ms after the start, which a busy
	// machine's process start could outlast: SIGTERM then killed it.
	for deadline := time.Now().Add(20 * time.Second); srv.Served() < 100; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the run's load never reached the target (%d requests in 20 s)", srv.Served())
		}
	}
	cmd.Process.Signal(syscall.SIGTERM)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if code := exitCode(err); code != 143 || !strings.Contains(out.String(), "Requests/sec:") {
			t.Errorf("exit %d, want 143 with the summary; stdout %s stderr %s", code, out.String(), errb.String())
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		<-exited
		t.Fatal("still running 10 s after SIGTERM")
	}
}
