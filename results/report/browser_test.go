package report

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// chromium finds a headless-capable Chromium. Without one the browser
// tests skip, or fail under CI, where the image must provide it.
func chromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the browser test runs in the full pass")
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless_shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const msg = "no chromium on PATH: .ci/run must apt-get install chromium for the HTML report's browser test"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// browse loads file in headless Chromium with extra flags (--dump-dom,
// --screenshot=…) and returns its stdout and its log.
func browse(t *testing.T, file string, flags ...string) (string, string) {
	t.Helper()
	bin := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--enable-logging=stderr", "--v=0", "--user-data-dir=" + t.TempDir()}, flags...)
	cmd := exec.CommandContext(ctx, bin, append(args, "file://"+file)...)
	var out, log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &log
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, log.String())
	}
	return out.String(), log.String()
}

var (
	rootTag   = regexp.MustCompile(`(?s)<html[^>]*>`)
	attrRE    = regexp.MustCompile(`data-([a-z-]+)="([^"]*)"`)
	consoleRE = regexp.MustCompile(`(?m)^.*(CONSOLE|Uncaught|net::ERR_|Failed to load resource).*$`)
)

// pageState reads the attributes the report's own script (check.js) sets
// on <html> once the page has loaded.
func pageState(t *testing.T, dom string) map[string]string {
	t.Helper()
	tag := rootTag.FindString(dom)
	if tag == "" {
		t.Fatalf("no <html> in the dumped DOM:\n%.500s", dom)
	}
	st := map[string]string{}
	for _, m := range attrRE.FindAllStringSubmatch(tag, -1) {
		st[m[1]] = m[2]
	}
	return st
}

func writeHTML(t *testing.T, sweeps []*Sweep, edit func(string) string) string {
	t.Helper()
	var buf bytes.Buffer
	if err := HTML(&buf, sweeps, Options{}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	if edit != nil {
		page = edit(page)
	}
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// The HTML report of the committed sweep opens in a real browser, draws
// every chart, logs no error and fetches nothing; so do a run's and a
// sweep's with their timelines, drawn over time. With LOADGEN_SCREENSHOT
// set (best an absolute path), a full-page screenshot of the sweep's is
// saved there, and one of the run over time beside it (NAME-overtime.png):
// LOADGEN_SCREENSHOT=$PWD/docs/report.png go test ./results/report makes
// docs/report.png and docs/report-overtime.png.
func TestHTMLInBrowser(t *testing.T) {
	for name, sweeps := range map[string][]*Sweep{"sweep": fixtureSweep(t), "run": fixtureRun(t), "cni": fixtureCNI(t), "cni-modes": fixtureCNIModes(t),
		"timeline-run": fixtureTimelineRun(t), "timeline-sweep": fixtureTimelineSweep(t)} {
		t.Run(name, func(t *testing.T) {
			path := writeHTML(t, sweeps, nil)
			src, _ := os.ReadFile(path)
			charts := strings.Count(string(src), `<svg class="chart`) // "chart", "chart overtime"
			if charts == 0 {
				t.Fatal("the report has no charts")
			}
			dom, log := browse(t, path, "--window-size=1400,1000", "--dump-dom")
			st := pageState(t, dom)
			if st["checked"] != "yes" {
				t.Fatalf("the page's check did not run: %v\n%s", st, log)
			}
			if st["charts"] != strconv.Itoa(charts) || st["charts-bad"] != "" {
				t.Errorf("%s of %d charts seen; not drawn: %q", st["charts"], charts, st["charts-bad"])
			}
			if e := st["js-errors"]; e != "" {
				t.Errorf("script errors: %s", e)
			}
			if lines := consoleRE.FindAllString(log, -1); len(lines) > 0 {
				t.Errorf("the browser logged:\n%s", strings.Join(lines, "\n"))
			}
			if strings.HasPrefix(name, "timeline") && !strings.Contains(string(src), `class="chart overtime"`) {
				t.Error("no chart over time")
			}
			if out := os.Getenv("LOADGEN_SCREENSHOT"); out != "" && (name == "sweep" || name == "timeline-run") {
				if name == "timeline-run" {
					ext := filepath.Ext(out)
					out = strings.TrimSuffix(out, ext) + "-overtime" + ext
				}
				h, _ := strconv.Atoi(st["height"])
				h = max(1000, min(h, 12000))
				abs, _ := filepath.Abs(out) // relative to this package's directory, as go test runs it
				if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
					t.Fatal(err)
				}
				browse(t, path, "--window-size=1400,"+strconv.Itoa(h), "--screenshot="+abs)
				if fi, err := os.Stat(abs); err != nil || fi.Size() < 10000 {
					t.Errorf("screenshot %s: %v", abs, err)
				}
			}
		})
	}
}

// The page's check catches what it must: a script error, and a chart
// with nothing drawn.
func TestBrowserCheckCatchesFaults(t *testing.T) {
	path := writeHTML(t, fixtureRun(t), func(page string) string {
		broken := `<svg class="chart" id="empty-chart" viewBox="0 0 10 10"></svg><script>undefinedFunction()</script>`
		return strings.Replace(page, "</main>", broken+"</main>", 1)
	})
	dom, log := browse(t, path, "--window-size=1400,1000", "--dump-dom")
	st := pageState(t, dom)
	if !strings.Contains(st["charts-bad"], "empty-chart") {
		t.Errorf("an empty chart passed: %v", st)
	}
	if !strings.Contains(st["js-errors"], "undefinedFunction") {
		t.Errorf("a script error went unnoticed: %v", st)
	}
	if !consoleRE.MatchString(log) {
		t.Logf("note: this Chromium does not log console errors to stderr; the page's own marker caught it")
	}
}
