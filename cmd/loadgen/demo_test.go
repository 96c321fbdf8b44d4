package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

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
