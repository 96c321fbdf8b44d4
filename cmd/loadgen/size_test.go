package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"loadgen/results/store"
)

// `loadgen size`: real nginx with 1 and 2 workers, keep-alive requests/s
// and verified TLS handshakes/s for each, a sizing table on stdout and in
// the report.
func TestSize(t *testing.T) {
	if testing.Short() {
		t.Skip("starts four nginx instances; not with -short")
	}
	needNginx(t)
	t.Setenv("LOADGEN_TEST_AS_CLI", "1") // size runs this binary as `loadgen serve httpbin`
	dir := filepath.Join(t.TempDir(), "size")
	code, out, stderr := cli(t, "size", "--workers", "1,2", "--ladder", "c8t2", "-d", "1s", "--warmup", "300ms", "-o", dir, "-q")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	for _, w := range []string{"1", "2"} {
		// workers, req/s, per worker, proxy cpu, TLS hs/s, per worker, proxy cpu
		re := regexp.MustCompile(`(?m)^\s*` + w + `\s+[1-9]\d*\s+[1-9]\d*\s+\d+\.\d\d\s+[1-9]\d*\s+[1-9]\d*\s+\d+\.\d\d\s*$`)
		if !re.MatchString(out) {
			t.Errorf("no sizing row with every figure for %s workers:\n%s", w, out)
		}
	}
	_, steps, err := store.ReadSweep(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 4 {
		t.Fatalf("%d steps, want 4 (2 worker counts × keep-alive and TLS)", len(steps))
	}
	for _, st := range steps {
		if st.Run == nil {
			t.Fatalf("step %s failed: %s", st.ID, st.Failed)
		}
		s, c := st.Run.Summary, st.Run.Config
		if s.Requests == 0 || s.Errors.Total() != 0 {
			t.Errorf("step %s: %d requests, errors %+v", st.ID, s.Requests, s.Errors)
		}
		wantWorkers := 1
		if strings.HasPrefix(st.Path, "nginx-w2") {
			wantWorkers = 2
		}
		tls := strings.HasSuffix(st.Path, "-tls")
		if st.Workers != wantWorkers || c.TLS != tls || c.NewConn != tls {
			t.Errorf("step %s: workers %d, tls %v, new-conn %v", st.ID, st.Workers, c.TLS, c.NewConn)
		}
		if tls && (s.Connections.Measured < s.Requests || s.Connections.Measured > s.Requests+int64(st.Connections)) {
			t.Errorf("step %s: %d connections in the window for %d requests: want one each", st.ID, s.Connections.Measured, s.Requests)
		}
	}
	code, md, stderr := cli(t, "report", dir)
	if code != 0 || !strings.Contains(md, "## Ingress sizing") || !regexp.MustCompile(`(?m)^\| 2 \| [1-9]`).MatchString(md) {
		t.Errorf("report: exit %d, no sizing table with 2 workers\n%s\n%s", code, md, stderr)
	}
}

func TestSizeBadInput(t *testing.T) {
	for _, args := range [][]string{
		{"--workers", "0"}, {"--workers", "1..x"}, {"--workers", "3..1"}, {"--ladder", "c1t4"},
		{"--payload", "-5"}, {"--key-type", "dsa"}, {"-d", "0s"}, {"--resume"},
	} {
		code, _, stderr := cli(t, append([]string{"size"}, args...)...)
		if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
			t.Errorf("size %v: exit %d, want 2 with a short message:\n%s", args, code, stderr)
		}
	}
}
