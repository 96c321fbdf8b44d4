package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"loadgen/results"
)

// writeTargets writes a targets file of three weighted requests to the
// in-process httpbin at base (and the body the POST sends) and returns
// its path.
func writeTargets(t *testing.T, base string) string {
	t.Helper()
	dir := t.TempDir()
	body := filepath.Join(dir, "body.json")
	if err := os.WriteFile(body, []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "# three requests, vegeta's format\n" +
		"# name=search weight=1\nGET " + base + "/get?q=dragon\nX-Account: 1\n\n" +
		"# weight=2\nPOST " + base + "/post\nContent-Type: application/json\n@" + body + "\n\n" +
		"# name=bytes weight=3\nGET " + base + "/bytes/100\n"
	path := filepath.Join(dir, "targets.txt")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// loadgen run --targets: a run of three weighted requests against
// httpbin reports each request's own counts, within 2% of its weight's
// share (exactly it with -n), on both drivers, over HTTP/1.1 and h2c.
func TestTargetsRun(t *testing.T) {
	srv := startHTTPBinServer(t)
	targets := writeTargets(t, "http://"+srv.Addr())
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"loop", []string{"--driver", "loop", "-d", "1s"}},
		{"goroutines", []string{"--driver", "goroutines", "-d", "1s"}},
		{"h2c/loop", []string{"-p", "h2c", "--driver", "loop", "-d", "1s"}},
		{"h2c/goroutines", []string{"-p", "h2c", "--driver", "goroutines", "-R", "3000", "-d", "1s"}},
		{"-n 600", []string{"-n", "600"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run.json")
			args := append([]string{"run", "-c", "4", "-t", "2", "--targets", targets, "--json", out}, tc.args...)
			code, stdout, stderr := cli(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
			}
			if !strings.Contains(stdout, "Requests by name") || !strings.Contains(stdout, "\n    POST /post ") {
				t.Errorf("no table by name in\n%s", stdout)
			}
			checkSchema(t, "run", out)
			b, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var run results.Run
			if err := json.Unmarshal(b, &run); err != nil {
				t.Fatal(err)
			}
			if run.Config.Targets != targets || run.Config.Target != "http://"+srv.Addr() {
				t.Errorf("config: targets %q, target %q", run.Config.Targets, run.Config.Target)
			}
			by := run.RequestsByName
			if len(by) != 3 || by[0].Name != "search" || by[1].Name != "POST /post" || by[2].Name != "bytes" {
				t.Fatalf("names %+v", by)
			}
			var sum int64
			for i, nr := range by {
				share := float64(i+1) / 6
				if math.Abs(nr.WeightShare-share) > 1e-9 || math.Abs(nr.Share-share) > 0.02*share {
					t.Errorf("%s: share %.4f, weight's %.4f", nr.Name, nr.Share, share)
				}
				if nr.Status[200] != nr.Requests || nr.Requests == 0 || nr.Errors.Total() != 0 || nr.Latency.P99 == 0 {
					t.Errorf("%s: %+v", nr.Name, nr)
				}
				sum += nr.Requests
			}
			if sum != run.Summary.Requests {
				t.Errorf("%d requests by name, %d in all", sum, run.Summary.Requests)
			}
			if tc.name == "-n 600" && (by[0].Requests != 100 || by[1].Requests != 200 || by[2].Requests != 300) {
				t.Errorf("-n 600: %d, %d, %d", by[0].Requests, by[1].Requests, by[2].Requests)
			}
		})
	}
}

// A bad targets file, or --targets with what it replaces, is a usage
// error (exit 2) before any load, saying where and what.
func TestTargetsBadInput(t *testing.T) {
	srv := startHTTPBinServer(t)
	base := "http://" + srv.Addr()
	good := writeTargets(t, base)
	file := func(src string) string {
		p := filepath.Join(t.TempDir(), "targets.txt")
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := file("GET " + base + "/get\n\n# name=x\nGT/ " + base + "/\n")
	for _, tc := range []struct {
		name string
		args []string
		msg  string
	}{
		{"bad line", []string{"run", "--targets", bad}, bad + `:4: want "METHOD URL", got "GT/ ` + base + `/"`},
		{"two origins", []string{"run", "--targets", file("GET " + base + "/get\nGET http://127.0.0.1:1/\n")}, ":2: \"http://127.0.0.1:1/\" goes to http://127.0.0.1:1, the requests before it (line 1) to " + base},
		{"missing body", []string{"run", "--targets", file("POST " + base + "/post\n@/nonexistent/body\n")}, ":2: the body: open /nonexistent/body"},
		{"bad weight", []string{"run", "--targets", file("# weight=0\nGET " + base + "/\n")}, ":1: weight=0"},
		{"no file", []string{"run", "--targets", "/nonexistent/targets"}, "--targets: open /nonexistent/targets"},
		{"and a URL", []string{"run", "--targets", good, base + "/get"}, "leave out the URL"},
		{"and a body", []string{"run", "--targets", good, "--body", "x"}, "leave out -m, --body and --body-file"},
		{"and a method", []string{"run", "--targets", good, "-m", "PUT"}, "leave out -m, --body and --body-file"},
		{"over grpc", []string{"run", "--targets", good, "-p", "grpc"}, "use -p http1, h2 or h2c"},
		{"x-net", []string{"run", "--targets", good, "-p", "h2c", "--client", "x-net"}, "--client x-net sends one request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, append(tc.args, "-d", "1s")...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr: %s", code, exitUsage, stderr)
			}
			if first := strings.SplitN(stderr, "\n", 2)[0]; !strings.HasPrefix(first, "loadgen: ") || !strings.Contains(first, tc.msg) {
				t.Errorf("first line %q, want one mentioning %q", first, tc.msg)
			}
			if stdout != "" {
				t.Errorf("output before the error: %s", stdout)
			}
		})
	}
	if n := srv.Served(); n != 0 {
		t.Errorf("the target served %d requests: load was sent", n)
	}
}
