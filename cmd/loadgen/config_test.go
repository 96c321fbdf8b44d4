package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"loadgen/internal/testport"
	"loadgen/results/store"
)

// runConfig runs loadgen run with args (a short closed-loop run), the
// environment as t.Setenv left it, and returns the run's recorded config.
func runConfig(t *testing.T, args ...string) (connections int, headers []string, stderr string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "run.json")
	code, _, errs := cli(t, append([]string{"run", "-q", "--json", out}, args...)...)
	if code != 0 {
		t.Fatalf("loadgen run %v: exit %d: %s", args, code, errs)
	}
	r, err := store.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	return r.Config.Connections, r.Config.Headers, errs
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestConfigPrecedence checks that each level of flag > LOADGEN_ variable >
// -f's file > default sets --connections when the levels above it are absent.
func TestConfigPrecedence(t *testing.T) {
	url := startHTTPBin(t) + "/get"
	file := writeFile(t, "run.yaml", "url: "+url+"\nconnections: 3\nthreads: 1\nrequests: 30\n")
	cases := []struct {
		name  string
		env   string // LOADGEN_CONNECTIONS, "" unset
		args  []string
		wantC int
	}{
		{"default", "", []string{"-t", "1", "-n", "30", url}, 10},
		{"file over default", "", []string{"-f", file}, 3},
		{"environment over file", "4", []string{"-f", file}, 4},
		{"flag over environment", "4", []string{"-f", file, "-c", "5"}, 5},
		{"environment alone", "6", []string{"-t", "1", "-n", "30", url}, 6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.env != "" {
				t.Setenv("LOADGEN_CONNECTIONS", tc.env)
			}
			if c, _, _ := runConfig(t, tc.args...); c != tc.wantC {
				t.Errorf("connections %d, want %d", c, tc.wantC)
			}
		})
	}
}

// TestRunFileJSON checks that -f reads JSON too (tab-indented, as editors
// write it), url and a repeatable flag's list included; the argument's URL
// wins over the file's.
func TestRunFileJSON(t *testing.T) {
	url := startHTTPBin(t) + "/get"
	file := writeFile(t, "run.json", "{\n\t\"url\": \"http://127.0.0.1:1/unused\",\n\t\"connections\": 2,\n\t\"threads\": 1,\n"+
		"\t\"requests\": 20,\n\t\"header\": [\"X-A: 1\", \"X-B: 2\"]\n}\n")
	c, headers, _ := runConfig(t, "-f", file, url)
	if c != 2 || !slices.Equal(headers, []string{"X-A: 1", "X-B: 2"}) {
		t.Errorf("connections %d, headers %q: want 2 and the file's two", c, headers)
	}
}

// TestEnvRepeatable checks that a repeatable flag's variable takes one value
// a line.
func TestEnvRepeatable(t *testing.T) {
	url := startHTTPBin(t) + "/get"
	t.Setenv("LOADGEN_HEADER", "X-A: 1\nX-B: 2, 3\n")
	if _, headers, _ := runConfig(t, "-c", "1", "-t", "1", "-n", "10", url); !slices.Equal(headers, []string{"X-A: 1", "X-B: 2, 3"}) {
		t.Errorf("headers %q, want the variable's two lines", headers)
	}
}

// TestConfigErrors checks that an unknown key names itself and the nearest
// valid one; a bad variable names the variable; both are usage errors, on run
// and on a command whose -f has its own format (sweep).
func TestConfigErrors(t *testing.T) {
	bad := writeFile(t, "bad.yaml", "url: http://127.0.0.1:1/\nconections: 3\n")
	cases := []struct {
		name string
		env  string
		args []string
		want []string
	}{
		{"unknown key", "", []string{"run", "-f", bad}, []string{`"conections" is not an option`, `did you mean "connections"?`}},
		{"no url", "", []string{"run", "-f", writeFile(t, "nourl.yaml", "connections: 3\n")}, []string{"url in -f's file"}},
		{"bad run variable", "LOADGEN_CONNECTIONS=ten", []string{"run", "http://127.0.0.1:1/"}, []string{`LOADGEN_CONNECTIONS="ten"`, "--connections"}},
		{"bad sweep variable", "LOADGEN_DURATION=abc", []string{"sweep", "--dry-run"}, []string{`LOADGEN_DURATION="abc"`, "--duration"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if k, v, ok := strings.Cut(tc.env, "="); ok {
				t.Setenv(k, v)
			}
			code, _, stderr := cli(t, tc.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d: %s", code, exitUsage, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
		})
	}
}

// TestEnvOverSweepFile checks that a LOADGEN_ variable wins over sweep's own
// -f file (as the flag would), which keeps its format.
func TestEnvOverSweepFile(t *testing.T) {
	file := writeFile(t, "sweep.yaml", "paths:\n  - name: baseline\n    url: http://127.0.0.1:1\nduration: 5s\nladder: c1t1\npayloads: [100]\n")
	for _, tc := range []struct{ env, want string }{{"", "about 5s"}, {"7s", "about 7s"}} {
		if tc.env != "" {
			t.Setenv("LOADGEN_DURATION", tc.env)
		}
		code, stdout, stderr := cli(t, "sweep", "-f", file, "--dry-run")
		if code != 0 || !strings.Contains(stdout+stderr, tc.want) {
			t.Errorf("LOADGEN_DURATION=%q: exit %d, output lacks %q: %s%s", tc.env, code, tc.want, stdout, stderr)
		}
	}
}

// TestChildEnv checks that a target loadgen starts does not inherit the
// variables of flags (LOADGEN_CERT, meant for run's client, is not serve's
// certificate), and keeps every other.
func TestChildEnv(t *testing.T) {
	t.Setenv("LOADGEN_CERT", "client.pem")
	t.Setenv("LOADGEN_NOT_A_FLAG_X", "1")
	env := childEnv()
	if slices.Contains(env, "LOADGEN_CERT=client.pem") || !slices.Contains(env, "LOADGEN_NOT_A_FLAG_X=1") {
		t.Errorf("child environment: LOADGEN_CERT kept or another dropped: %q", env)
	}
}

// TestProxyVariables checks that with HTTP_PROXY set (to a port nothing
// listens on) the run still reaches its target, directly, and says so in one
// line; NO_PROXY naming the target silences it.
func TestProxyVariables(t *testing.T) {
	url := startHTTPBin(t) + "/get"
	t.Setenv("HTTP_PROXY", "http://"+testport.Closed(t))
	_, _, stderr := runConfig(t, "-c", "1", "-t", "1", "-n", "10", url)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "HTTP_PROXY is set: loadgen ignores it and connects directly to 127.0.0.1:") {
		t.Errorf("stderr %q: want the one line about HTTP_PROXY", stderr)
	}
	// gRPC reads HTTPS_PROXY (as grpc-go does), whatever the TLS.
	t.Setenv("HTTPS_PROXY", "http://"+testport.Closed(t))
	_, _, stderr = runConfig(t, "-p", "grpc", "-c", "1", "-t", "1", "-n", "10", startGRPCEcho(t).Addr())
	if !strings.Contains(stderr, "HTTPS_PROXY is set: loadgen ignores it") {
		t.Errorf("-p grpc: stderr %q: want the line about HTTPS_PROXY", stderr)
	}
	t.Setenv("NO_PROXY", "localhost,127.0.0.0/8")
	if _, _, stderr := runConfig(t, "-c", "1", "-t", "1", "-n", "10", url); strings.Contains(stderr, "PROXY") {
		t.Errorf("NO_PROXY names the target, yet stderr says %q", stderr)
	}
}

func TestProxyNotice(t *testing.T) {
	cases := []struct {
		name     string
		env      map[string]string
		protocol string
		target   string
		want     string // the variable named, "" for no line
	}{
		{"http", map[string]string{"HTTP_PROXY": "http://p:3128"}, "", "http://10.0.0.1:8080/", "HTTP_PROXY"},
		{"lower case", map[string]string{"http_proxy": "http://p:3128"}, "", "http://10.0.0.1/", "http_proxy"},
		{"https only for https", map[string]string{"HTTPS_PROXY": "http://p:3128"}, "", "http://10.0.0.1/", ""},
		{"https", map[string]string{"HTTPS_PROXY": "http://p:3128"}, "h2", "https://svc.example:8443/", "HTTPS_PROXY"},
		{"grpc reads HTTPS_PROXY", map[string]string{"HTTPS_PROXY": "http://p:3128"}, "grpc", "10.0.0.1:50051", "HTTPS_PROXY"},
		{"tcp has none", map[string]string{"HTTP_PROXY": "http://p:3128", "HTTPS_PROXY": "x"}, "tcp-rr", "10.0.0.1:5201", ""},
		{"no_proxy star", map[string]string{"HTTP_PROXY": "x", "NO_PROXY": "*"}, "", "http://10.0.0.1/", ""},
		{"no_proxy domain", map[string]string{"HTTP_PROXY": "x", "no_proxy": ".svc.cluster.local"}, "", "http://a.ns.svc.cluster.local/", ""},
		{"no_proxy domain no dot", map[string]string{"HTTP_PROXY": "x", "NO_PROXY": "example.com"}, "", "http://api.example.com/", ""},
		{"no_proxy other domain", map[string]string{"HTTP_PROXY": "x", "NO_PROXY": "example.com"}, "", "http://notexample.com/", "HTTP_PROXY"},
		{"no_proxy cidr", map[string]string{"HTTP_PROXY": "x", "NO_PROXY": "10.0.0.0/8"}, "", "http://10.1.2.3/", ""},
		{"no_proxy port", map[string]string{"HTTP_PROXY": "x", "NO_PROXY": "10.0.0.1:9090"}, "", "http://10.0.0.1:8080/", "HTTP_PROXY"},
		{"no_proxy ipv6", map[string]string{"HTTP_PROXY": "x", "NO_PROXY": "::1"}, "", "http://[::1]:8080/", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := proxyNotice(tc.protocol, []string{tc.target}, func(k string) string { return tc.env[k] })
			if tc.want == "" && got != "" || tc.want != "" && !strings.Contains(got, "loadgen: "+tc.want+" is set") {
				t.Errorf("got %q, want a line naming %q", got, tc.want)
			}
		})
	}
}
