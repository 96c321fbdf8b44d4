package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"loadgen/internal/testport"
	"loadgen/results"
	"loadgen/results/hist"
	"loadgen/results/store"
	"loadgen/targets/httpbin"
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
		{"two hosts, one connection", []string{"run", "-c", "1", "--targets", file("GET " + base + "/get\nGET http://127.0.0.2:1/\n")}, "goes to 2 hosts, a connection or more each: give at least -c 2"},
		{"h2 on an http host", []string{"run", "-p", "h2", "--targets", file("GET https://127.0.0.2:1/\nGET " + base + "/get\n")}, "host " + base + ": -p h2 is HTTP/2 over TLS"},
		{"two hosts, driver loop", []string{"run", "--driver", "loop", "--targets", file("GET " + base + "/get\nGET http://127.0.0.2:1/\n")}, "--driver loop cannot drive a request mix on several hosts"},
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

// loadgen run --targets on two hosts (httpbin on 127.0.0.1 and on
// 127.0.0.2): each server answers its own requests, exactly their share
// of -n, open and closed loop; the reports give the figures by host; a
// host that refuses connections fails the run before any load, named.
func TestTargetsHosts(t *testing.T) {
	a := startHTTPBinServer(t)
	b, err := httpbin.New(httpbin.Config{Addr: "127.0.0.2:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	baseA, baseB := "http://"+a.Addr(), "http://"+b.Addr()
	dir := t.TempDir()
	targets := filepath.Join(dir, "targets.txt")
	src := "GET " + baseA + "/get\n\n# weight=2\nGET " + baseA + "/bytes/10\n\n# name=b weight=3\nGET " + baseB + "/get\n"
	if err := os.WriteFile(targets, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	served := map[string]uint64{}
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"closed", nil},
		{"open", []string{"-R", "3000"}},
		{"h2c", []string{"-p", "h2c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run.json")
			args := append([]string{"run", "-c", "4", "-n", "600", "--targets", targets, "--json", out}, tc.args...)
			code, stdout, stderr := cli(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
			}
			// 600 requests, a round of 6: 300 to each host.
			gotA, gotB := a.Served()-served["a"], b.Served()-served["b"]
			served["a"], served["b"] = a.Served(), b.Served()
			if gotA != 300 || gotB != 300 {
				t.Errorf("the servers answered %d and %d, want 300 each", gotA, gotB)
			}
			for _, want := range []string{"Requests by host", "\n    " + baseA + " (2 conn) ", "\n    " + baseB + " (2 conn) ",
				"\n    GET " + a.Addr() + "/bytes/10 ", "WARNING: the request mix goes to 2 hosts: it ran on goroutines"} {
				if !strings.Contains(stdout, want) {
					t.Errorf("no %q in\n%s", want, stdout)
				}
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
			if run.Config.Target != baseA+" "+baseB {
				t.Errorf("target %q, want both hosts", run.Config.Target)
			}
			if len(run.RequestsByHost) != 2 || run.RequestsByHost[0].Requests != 300 || run.RequestsByHost[1].Requests != 300 {
				t.Errorf("by host %+v", run.RequestsByHost)
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		closed := "http://" + strings.Replace(testport.Closed(t), "127.0.0.1", "127.0.0.2", 1)
		bad := filepath.Join(dir, "refused.txt")
		if err := os.WriteFile(bad, []byte("GET "+baseA+"/get\nGET "+closed+"/get\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, stderr := cli(t, "run", "-c", "2", "-d", "1s", "--targets", bad)
		want := "cannot connect to " + closed + " (host 2 of the request mix's 2)"
		if code == 0 || !strings.Contains(stderr, want) {
			t.Errorf("exit %d, stderr %q; want an error with %q", code, stderr, want)
		}
	})
}

// loadgen merge of two generators' runs of one request mix keeps its
// table by name: each name's counts the two runs' summed, its latency
// that of the two runs' histograms of the name merged; loadgen report
// prints the table. A run of another mix is refused in one line.
func TestTargetsMerge(t *testing.T) {
	srv := startHTTPBinServer(t)
	base := "http://" + srv.Addr()
	dir := t.TempDir()
	targets := filepath.Join(dir, "targets.txt")
	src := "# name=get weight=1\nGET " + base + "/get\n\n# name=bytes weight=2\nGET " + base + "/bytes/100\n"
	if err := os.WriteFile(targets, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// Two generators of one load run at the same time (merge refuses runs
	// whose windows do not overlap), each -n 300 at 300/s: about 1 s.
	files := []string{filepath.Join(dir, "w0.json"), filepath.Join(dir, "w1.json")}
	errs := make(chan string, len(files))
	for _, f := range files {
		go func() {
			code, _, errOut := cli(t, "run", "-q", "-c", "2", "-t", "1", "-R", "300", "-n", "300", "--targets", targets, "--json", f)
			if code != 0 {
				errOut = "exit " + itoa(int64(code)) + ": " + errOut
			}
			errs <- errOut
		}()
	}
	for range files {
		if errOut := <-errs; errOut != "" {
			t.Fatalf("run: %s", errOut)
		}
	}
	var runs []*results.Run
	for _, f := range files {
		r, err := store.ReadRun(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(r.RequestsByName) != 2 {
			t.Fatalf("%s: figures by name %+v", f, r.RequestsByName)
		}
		runs = append(runs, r)
	}
	// The skew of the two windows is not what this test is about.
	all := filepath.Join(dir, "all.json")
	if code, out, errOut := cli(t, "merge", "--allow-skew", files[0], files[1], "-o", all); code != 0 {
		t.Fatalf("merge: exit %d\n%s%s", code, out, errOut)
	}
	checkSchema(t, "run", all)
	got, err := store.ReadRun(all)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.RequestsByName) != 2 || got.RequestsByName[0].Name != "get" || got.RequestsByName[1].Name != "bytes" {
		t.Fatalf("merged figures by name %+v, want get and bytes", got.RequestsByName)
	}
	var sum int64
	for k, nr := range got.RequestsByName {
		merged := hist.New()
		var requests, ok int64
		for _, r := range runs {
			w := r.RequestsByName[k]
			h, err := hist.Decode(w.Histogram)
			if err != nil {
				t.Fatalf("%s's histogram: %v", w.Name, err)
			}
			merged.Merge(h)
			requests += w.Requests
			ok += w.Status[200]
		}
		if nr.Requests != requests || nr.Status[200] != ok || nr.Latency != results.Reduce(merged) || nr.Latency.Count == 0 {
			t.Errorf("%s: %d requests (%d 200s), latency %+v;\nwant %d (%d), %+v", nr.Name, nr.Requests, nr.Status[200], nr.Latency,
				requests, ok, results.Reduce(merged))
		}
		sum += nr.Requests
	}
	if sum != got.Summary.Requests {
		t.Errorf("%d requests by name, %d in all", sum, got.Summary.Requests)
	}
	code, out, errOut := cli(t, "report", all)
	if code != 0 || !strings.Contains(out, "Requests by name") || !strings.Contains(out, "| get | ") || !strings.Contains(out, "| bytes | ") {
		t.Errorf("report of the merge: exit %d, no table by name in\n%s%s", code, out, errOut)
	}
	// A run of another mix (a name less): refused, in one line.
	other := *runs[1]
	other.RequestsByName = other.RequestsByName[1:]
	odd := writeJSON(t, filepath.Join(dir, "odd.json"), &other)
	code, _, errOut = cli(t, "merge", "--allow-skew", files[0], odd, "-o", filepath.Join(dir, "x.json"))
	if code != exitFail || !strings.Contains(errOut, `different request mixes (name "get" in `+files[0]+" only)") ||
		strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("another mix: exit %d, %q", code, errOut)
	}
}
