package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"loadgen/internal/testport"
	"loadgen/results/store"
	"loadgen/targets/grpcecho"
	"loadgen/targets/httpbin"
)

// cli runs the command line in-process and returns exit status and output.
func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := execute(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func startHTTPBin(t *testing.T) string {
	t.Helper()
	return "http://" + startHTTPBinServer(t).Addr()
}

func startHTTPBinServer(t *testing.T) *httpbin.Server {
	t.Helper()
	srv, err := httpbin.New(httpbin.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func startGRPCEcho(t *testing.T) *grpcecho.Server {
	t.Helper()
	g, err := grpcecho.New(grpcecho.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

func TestBadInput(t *testing.T) {
	url := startHTTPBin(t) + "/get"
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string // in the one-line error
	}{
		{"unknown flag", []string{"run", "--bogus", url}, exitUsage, "unknown flag: --bogus"},
		{"unknown command", []string{"frobnicate"}, exitUsage, "unknown command"},
		{"no URL", []string{"run"}, exitUsage, "one target URL"},
		{"malformed URL", []string{"run", "-d", "1s", "http//nohost"}, exitUsage, "malformed URL"},
		{"unsupported scheme", []string{"run", "-d", "1s", "ftp://127.0.0.1:21/"}, exitUsage, "unsupported scheme"},
		{"-c 0", []string{"run", "-c", "0", url}, exitUsage, "-c must be at least 1"},
		{"-t > -c", []string{"run", "-c", "2", "-t", "4", url}, exitUsage, "-t 4 is more than -c 2"},
		{"-R -5", []string{"run", "-R", "-5", url}, exitUsage, "-R"},
		{"bad duration", []string{"run", "-d", "ten", url}, exitUsage, "not a duration"},
		{"bad timeout", []string{"run", "--timeout", "soon", url}, exitUsage, "invalid argument"},
		{"unknown protocol", []string{"run", "-p", "smtp", url}, exitUsage, "unknown protocol"},
		{"tls flags on plaintext", []string{"run", "--cacert", "x.pem", url}, exitUsage, "plaintext target"},
		{"unreachable port", []string{"run", "-d", "1s", "http://" + testport.Closed(t) + "/"}, exitFail, "cannot connect"},
		{"body and body-file", []string{"run", "--body", "a", "--body-file", "b", url}, exitUsage, "use one"},
		{"size over http", []string{"run", "--size", "100", url}, exitUsage, "--size"},
		{"missing body file", []string{"run", "--body-file", "/nonexistent/x", url}, exitUsage, "--body-file"},
		{"unknown subcommand", []string{"serve", "nosuchtarget"}, exitUsage, `unknown command "nosuchtarget" for "loadgen serve": use one of grpc, httpbin, tcp`},
		{"new-conn with streams", []string{"run", "-p", "h2c", "--new-conn", "-m", "10", url}, exitUsage, "use one of them"},
		{"netns with a host name", []string{"run", "--netns", "lab", "http://localhost:8080/"}, exitUsage, "IP address"},
		{"unwritable --json before any load", []string{"run", "-d", "1h", "--json", "/nonexistent/x.json", url}, exitUsage, "cannot write /nonexistent/x.json: directory /nonexistent does not exist"},
		{"--resume of no sweep", []string{"sweep", "--resume", "-o", t.TempDir(), "--path", "baseline=" + url}, exitUsage, "holds no sweep"},
		{"unknown completion shell", []string{"completion", "nosh"}, exitUsage, `unknown command "nosh" for "loadgen completion"`},
		{"bad count", []string{"run", "-c", "1.5", url}, exitUsage, `"1.5" is not a whole number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := cli(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tc.code, stderr)
			}
			first := strings.SplitN(stderr, "\n", 2)[0]
			if !strings.HasPrefix(first, "loadgen: ") || !strings.Contains(first, tc.msg) {
				t.Errorf("first line %q, want a 'loadgen: ' error mentioning %q", first, tc.msg)
			}
			if strings.Contains(stderr, "goroutine ") || strings.Contains(stderr, "panic") {
				t.Errorf("stack trace in output:\n%s", stderr)
			}
		})
	}
}

// The summary must parse with the regular expressions scripts use on wrk.
func TestWrkCompatibleOutput(t *testing.T) {
	srv := startHTTPBinServer(t)
	url := "http://" + srv.Addr() + "/bytes/100"
	dir := t.TempDir()
	jsonPath := filepath.Join(dir, "out.json")
	hlogPath := filepath.Join(dir, "out.hlog")
	code, out, stderr := cli(t, "run", "-c", "4", "-t", "2", "-d", "1s", "--latency", "--json", jsonPath, "--hlog", hlogPath, url)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, re := range []string{
		`(?m)^Running 1s test @ ` + regexp.QuoteMeta(url) + `$`,
		`(?m)^  2 threads and 4 connections$`,
		`(?m)^  Thread Stats   Avg      Stdev     Max   \+/- Stdev$`,
		`(?m)^    Latency +[\d.]+(us|ms|s) +[\d.]+(us|ms|s) +[\d.]+(us|ms|s) +[\d.]+%$`,
		`(?m)^    Req/Sec +[\d.]+[kM]? +[\d.]+[kM]? +[\d.]+[kM]? +[\d.]+%$`,
		`(?m)^  Latency Distribution$`,
		`(?m)^     50% +[\d.]+(us|ms|s)$`,
		`(?m)^     99% +[\d.]+(us|ms|s)$`,
		`(?m)^  \d+ requests in [\d.]+s, [\d.]+[KMG]?B read$`,
		`(?m)^Requests/sec: +[\d.]+$`,
		`(?m)^Transfer/sec: +[\d.]+[KMG]?B$`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("output does not match %s:\n%s", re, out)
		}
	}
	run, err := store.ReadRun(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	n := regexp.MustCompile(`(?m)^  (\d+) requests in`).FindStringSubmatch(out)
	if n == nil || n[1] != itoa(run.Summary.Requests) {
		t.Errorf("stdout says %v requests, JSON %d", n, run.Summary.Requests)
	}
	if served := srv.Served(); uint64(run.Summary.Requests) != served {
		t.Errorf("loadgen counted %d requests, httpbin served %d", run.Summary.Requests, served)
	}
	if run.Env.Kernel == "" || run.Env.GOMAXPROCS != min(2, run.Env.NumCPU) || run.Generator.CPUSeconds <= 0 || run.Generator.PeakRSS <= 0 {
		t.Errorf("environment or generator cost missing: %+v %+v", run.Env, run.Generator)
	}
	hl, err := os.ReadFile(hlogPath)
	if err != nil || !bytes.Contains(hl, []byte("#[Histogram log format version 1.3]")) || !bytes.Contains(hl, []byte("HISTF")) {
		t.Errorf("hlog: %v\n%s", err, hl)
	}
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

// syncBuffer is a bytes.Buffer safe to read while a command writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A run interrupted by its context still prints and writes what it measured.
func TestInterruptedRunWritesResults(t *testing.T) {
	srv := startHTTPBinServer(t)
	url := "http://" + srv.Addr() + "/get"
	jsonPath := filepath.Join(t.TempDir(), "out.json")
	ctx, cancel := context.WithCancel(context.Background())
	var out, errb syncBuffer
	done := make(chan int)
	go func() {
		done <- execute(ctx, []string{"run", "-c", "2", "-d", "60s", "--json", jsonPath, url}, &out, &errb)
	}()
	// Interrupted once the load is on: the target has answered.
	for deadline := time.Now().Add(20 * time.Second); srv.Served() < 100; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the run's load never reached the target (%d requests in 20 s)", srv.Served())
		}
	}
	cancel()
	code := <-done
	if code != 130 {
		t.Errorf("exit %d, want 130 for an interrupted run; stderr %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "Requests/sec:") || !strings.Contains(out.String(), "Interrupted") {
		t.Errorf("no summary after interrupt:\n%s", out.String())
	}
	run, err := store.ReadRun(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if !run.Interrupted || run.Summary.Requests == 0 {
		t.Errorf("JSON: interrupted %v, %d requests", run.Interrupted, run.Summary.Requests)
	}
}

// A result that cannot be written after the run (its directory vanished
// meanwhile, a full disk) fails the run, naming the file, and the summary
// is still printed. (A directory missing from the start is refused before
// any load: see TestBadInput.)
func TestJSONWriteFailureIsReported(t *testing.T) {
	srv := startHTTPBinServer(t)
	url := "http://" + srv.Addr() + "/get"
	dir := filepath.Join(t.TempDir(), "gone")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// Gone once the load is on (the directory was checked before it), not
	// 300 ms after the test starts, which a busy machine could reach before
	// that check (the run then refused before any load) or, late, after the
	// run.
	go func() {
		for end := time.Now().Add(10 * time.Second); srv.Served() == 0 && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
		os.RemoveAll(dir)
	}()
	path := filepath.Join(dir, "out.json")
	code, out, stderr := cli(t, "run", "-c", "1", "-d", "1s", "--json", path, url)
	if code != exitFail || !strings.Contains(stderr, "--json") || !strings.Contains(stderr, path) {
		t.Errorf("exit %d, stderr %q: want exit 1 naming --json and %s", code, stderr, path)
	}
	if !strings.Contains(out, "Requests/sec:") {
		t.Errorf("the summary must still be printed:\n%s", out)
	}
}

func TestHelp(t *testing.T) {
	code, out, _ := cli(t, "run", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"-c, --connections", "-t, --threads", "GOMAXPROCS", "coordinated-omission", "--hlog", "--json", "-R, --rate"} {
		if !strings.Contains(out, want) {
			t.Errorf("--help lacks %q", want)
		}
	}
}

// run --help says how connections are driven as they are: on event loops
// where the protocol allows, a goroutine each only on the goroutine driver.
func TestRunHelpSaysHowConnectionsAreDriven(t *testing.T) {
	long := strings.Join(strings.Fields(newRunCmd().Long), " ")
	if strings.Contains(long, "Threads, in Go terms: every connection (every stream, with -m) is its own goroutine") {
		t.Errorf("run --help says every connection is its own goroutine, false on event loops:\n%s", long)
	}
	for _, want := range []string{"event loop", "--driver goroutines"} {
		if !strings.Contains(long, want) {
			t.Errorf("run --help does not say %q:\n%s", want, long)
		}
	}
}

// The conventions users of other tools expect: --version and -v, shell
// completion, SI suffixes and plain seconds, a target without a scheme.
func TestConventions(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-v"}, {"version"}} {
		if code, out, _ := cli(t, args...); code != 0 || !strings.HasPrefix(out, "loadgen ") {
			t.Errorf("%v: exit %d, %q", args, code, out)
		}
	}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		if code, out, _ := cli(t, "completion", sh); code != 0 || !strings.Contains(out, "loadgen") {
			t.Errorf("completion %s: exit %d", sh, code)
		}
	}
	srv := startHTTPBinServer(t)
	code, out, stderr := cli(t, "run", "-c", "1k", "-t", "1", "-n", "2k", "-d", "2m30s", srv.Addr()+"/get")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Running 2m30s test @ http://" + srv.Addr() + "/get", "1 threads and 1000 connections"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := srv.Served(); n != 2000 {
		t.Errorf("-n 2k: httpbin served %d", n)
	}
}
