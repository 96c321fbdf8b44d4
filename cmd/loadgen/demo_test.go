package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"loadgen/loadgen/sweep"
	"loadgen/results/store"
)

// The built-in demo: `loadgen sweep` with no arguments sweeps httpbin direct
// and through a real nginx, and prints a table with both paths.
func TestDemoSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("the demo takes about a minute; not with -short")
	}
	needNginx(t)
	t.Setenv("LOADGEN_TEST_AS_CLI", "1") // the demo runs this binary as `loadgen serve httpbin`
	dir := filepath.Join(t.TempDir(), "demo")
	// The nginx path's watch is called nginx: cpu.nginx assertions hold on it.
	code, out, stderr := cli(t, "sweep", "-o", dir, "-q", "--assert", "cpu.nginx<64", "--assert", "mem.nginx<4096MiB")
	if code != 0 || !strings.Contains(out, "assertions: all") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	for _, rung := range []string{"c1t1", "c4t4", "c16t16", "c64t64"} {
		for _, path := range []string{"baseline", "nginx"} {
			re := regexp.MustCompile(`(?m)^\s*` + rung + `\s+` + path + `\s+\d+\s`)
			if len(re.FindAllString(out, -1)) != 2 { // one row per payload
				t.Errorf("table lacks %s %s rows for both payloads:\n%s", rung, path, out)
			}
		}
	}
	m, steps, err := store.ReadSweep(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 16 || len(m.Steps) != 16 {
		t.Fatalf("%d steps of %d planned, want 16", len(steps), len(m.Steps))
	}
	for _, st := range steps {
		if st.Run == nil || st.Run.Summary.Requests == 0 || st.Run.Summary.Errors.Total() != 0 {
			t.Errorf("step %s: failed %q or errors", st.ID, st.Failed)
			continue
		}
		var proxy, target bool
		for _, w := range st.Watched {
			proxy = proxy || (w.Role == "proxy" && w.CPUSeconds > 0 && w.MemMean > 0)
			target = target || (w.Role == "target" && w.CPUSeconds > 0 && w.MemMean > 0)
		}
		if !target || (st.Path == "nginx") != proxy {
			t.Errorf("step %s: watched %+v; want the target always and nginx on its path", st.ID, st.Watched)
		}
	}
}

// The built-in demo takes the sweep flags given on the command line over
// its plan (c1t1…c64t64 × 100 B, 1 KiB × 3 s): `sweep --ladder c4t4
// --payloads 1KiB -d 2s` plans c4t4 × 1 KiB × 2 s on each of its paths.
func TestDemoSweepTakesFlags(t *testing.T) {
	paths := len(sweep.Demo(demoHasNginx()).Paths)
	dir := filepath.Join(t.TempDir(), "demo")
	code, out, stderr := cli(t, "sweep", "--ladder", "c4t4", "--payloads", "1KiB", "-d", "2s", "--dry-run", "-o", dir)
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	steps := regexp.MustCompile(`(?m)^\d+\s+(\S+)\s`).FindAllStringSubmatch(out, -1)
	if len(steps) != paths {
		t.Errorf("%d steps planned, want one per path (%d):\n%s", len(steps), paths, out)
	}
	for _, m := range steps {
		if !strings.HasSuffix(m[1], "_c4t4_1KiB_closed_r1") {
			t.Errorf("step %s: want c4t4 × 1 KiB", m[1])
		}
	}
	// 2 s measured after the demo's 0.5 s warm-up, and the 0.3 s the
	// runner counts a step to start and write (sweep.Spec.StepTime).
	per := 2*time.Second + 500*time.Millisecond + 300*time.Millisecond
	if want := "about " + (time.Duration(paths) * per).Round(time.Second).String(); !strings.Contains(stderr, want) {
		t.Errorf("the plan's header does not say %s:\n%s", want, stderr)
	}
	if !strings.Contains(out, "loadgen's httpbin, started by loadgen") {
		t.Errorf("a dry run says where the demo's paths go, without starting them:\n%s", out)
	}
	// Repeats and rates too.
	code, out, stderr = cli(t, "sweep", "--ladder", "c4t4,c8t8", "--payloads", "100", "--repeats", "2", "-R", "100,200", "--dry-run", "-o", dir)
	if n := len(regexp.MustCompile(`(?m)^\d+\s+\S+_c[48]t[48]_100B_r[12]00_r[12]\s`).FindAllString(out, -1)); code != exitOK || n != paths*2*2*2 {
		t.Errorf("exit %d, %d steps of c4t4,c8t8 × 100 B × 2 rates × 2 repeats, want %d:\n%s\n%s", code, n, paths*8, out, stderr)
	}
}

// The demo's flags are the plan it runs: warm-up, timeout and endpoint
// reach its steps.
func TestDemoSweepRunsItsFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the demo's servers; not with -short")
	}
	t.Setenv("LOADGEN_TEST_AS_CLI", "1") // the demo runs this binary as `loadgen serve httpbin`
	dir := filepath.Join(t.TempDir(), "demo")
	code, out, stderr := cli(t, "sweep", "--ladder", "c1t1", "--payloads", "100", "-d", "300ms", "--warmup", "0",
		"--timeout", "1500ms", "--endpoint", "/anything/{size}", "-q", "-o", dir)
	if code != exitOK {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	_, steps, err := store.ReadSweep(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != len(sweep.Demo(demoHasNginx()).Paths) {
		t.Fatalf("%d steps, want one per path", len(steps))
	}
	for _, st := range steps {
		c := st.Run.Config
		if c.Duration.D() != 300*time.Millisecond || c.Warmup.D() != 0 || c.Timeout.D() != 1500*time.Millisecond ||
			!strings.HasSuffix(c.Target, "/anything/100") || st.Run.Summary.Requests == 0 {
			t.Errorf("step %s ran %s for %v after %v, timeout %v, %d requests; want /anything/100 for 300ms after 0s, timeout 1.5s",
				st.ID, c.Target, c.Duration.D(), c.Warmup.D(), c.Timeout.D(), st.Run.Summary.Requests)
		}
	}
}

// Flags that cannot apply to the demo's HTTP/1.1 servers are refused,
// never ignored.
func TestDemoSweepRefusesFlags(t *testing.T) {
	for _, args := range [][]string{{"-p", "h2c"}, {"-p", "grpc"}, {"--call", "a.B/C"}, {"--watch", "x=name:nginx"}, {"--target-watch", "name:httpbin"}} {
		code, _, stderr := cli(t, append([]string{"sweep", "--dry-run", "-o", t.TempDir()}, args...)...)
		if code != exitUsage || !strings.Contains(stderr, args[0]+" ") || (args[0] != "--watch" && strings.Contains(stderr, "--watch")) {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}
