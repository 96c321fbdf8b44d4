// Package promtest runs a real Prometheus server (Debian's package) for
// tests: on loopback, scraping the given targets every second, and asks
// its query API. Tests that need it fail when CI is set and it is missing.
package promtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"loadgen/internal/testport"
)

// Start runs Prometheus until the test ends and returns its base URL. It
// scrapes the targets as job "self"; with none, itself.
func Start(t testing.TB, targets ...string) string { return StartWith(t, Options{}, targets...) }

// Options change how StartWith's Prometheus scrapes.
type Options struct {
	// IgnoreTimestamps times every sample by its scrape, not by the
	// timestamp the target exports (honor_timestamps: false, as
	// kube-prometheus' kubelet ServiceMonitor scrapes cAdvisor).
	IgnoreTimestamps bool
}

// StartWith is Start with options.
func StartWith(t testing.TB, o Options, targets ...string) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("prometheus is not installed (apt-get install prometheus); CI installs it")
		}
		t.Skip("prometheus is not installed (apt-get install prometheus)")
	}
	addr := testport.Held(t) // Prometheus binds it itself
	if len(targets) == 0 {
		targets = []string{addr}
	}
	quoted := make([]string, len(targets))
	for i, tg := range targets {
		quoted[i] = strconv.Quote(tg)
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	conf := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: self\n    honor_timestamps: %t\n    static_configs:\n      - targets: [%s]\n",
		!o.IgnoreTimestamps, strings.Join(quoted, ", "))
	if err := os.WriteFile(cfg, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	base := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		if resp, err := http.Get(base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus on %s not ready: %s", addr, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Query returns the value of an instant query that yields one sample, and
// false when it yields none.
func Query(t testing.TB, base, q string) (float64, bool) {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Result []struct {
				Value [2]any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Status != "success" {
		t.Fatalf("query %q: %v (status %q)", q, err, r.Status)
	}
	if len(r.Data.Result) == 0 {
		return 0, false
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("query %q: value %q", q, s)
	}
	return v, true
}
