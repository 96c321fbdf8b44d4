package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"loadgen/internal/testport"
	"loadgen/loadgen/sweep"
	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/run"
	"loadgen/results"
	"loadgen/results/live"
	"loadgen/results/report"
	"loadgen/results/store"
)

// uiChromium finds a headless-capable Chromium. Without one the --ui
// browser tests skip, or fail under CI, where the image must provide it.
func uiChromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: the browser test runs in the full pass")
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless_shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const msg = "no chromium on PATH: .ci/run must apt-get install chromium for the --ui dashboard's browser test"
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// uiBrowse loads the dashboard at url in headless Chromium, letting its
// script poll for a while (virtual time: Chromium waits for each fetch),
// with extra flags (--dump-dom, --screenshot=…), and returns its stdout.
func uiBrowse(t *testing.T, bin, url string, flags ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--enable-logging=stderr", "--v=0", "--user-data-dir=" + t.TempDir(), "--virtual-time-budget=2500"}, flags...)
	cmd := exec.CommandContext(ctx, bin, append(args, url)...)
	var out, log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &log
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, log.String())
	}
	return out.String()
}

// uiDOM is the dashboard's rendered DOM: <html>'s data-* attributes, what
// the page's script says of itself.
type uiDOM struct {
	dom  string
	root map[string]string
}

var (
	uiRootTag = regexp.MustCompile(`(?s)<html[^>]*>`)
	uiAttr    = regexp.MustCompile(`data-([a-z0-9-]+)="([^"]*)"`)
	uiRow     = regexp.MustCompile(`(?s)<tr[^>]*data-id="([^"]+)"[^>]*>(.*?)</tr>`)
	uiCell    = regexp.MustCompile(`<td class="([a-z0-9 ]+)"([^>]*)>([^<]*)</td>`)
)

func parseUI(t *testing.T, dom string) uiDOM {
	t.Helper()
	tag := uiRootTag.FindString(dom)
	if tag == "" {
		t.Fatalf("no <html> in the dumped DOM:\n%.500s", dom)
	}
	d := uiDOM{dom: dom, root: map[string]string{}}
	for _, m := range uiAttr.FindAllStringSubmatch(tag, -1) {
		d.root[m[1]] = m[2]
	}
	if d.root["rendered"] != "yes" || d.root["js-errors"] != "" {
		t.Fatalf("the page did not render: %v", d.root)
	}
	return d
}

// figure is the text and the data-v of the element with id.
func (d uiDOM) figure(t *testing.T, id string) (text, v string) {
	t.Helper()
	m := regexp.MustCompile(`<[a-z]+ [^>]*\bid="` + regexp.QuoteMeta(id) + `"([^>]*)>([^<]*)<`).FindStringSubmatch(d.dom)
	if m == nil {
		t.Fatalf("no #%s in the page", id)
	}
	tag := m[0]
	if a := regexp.MustCompile(`data-v="([^"]*)"`).FindStringSubmatch(tag); a != nil {
		v = a[1]
	}
	return m[2], v
}

func (d uiDOM) number(t *testing.T, id string) float64 {
	t.Helper()
	text, v := d.figure(t, id)
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("#%s (%q): data-v %q: %v", id, text, v, err)
	}
	return f
}

// rows are the steps table's rows by step ID: each cell's data-v (or
// text) by its class.
func (d uiDOM) rows() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, r := range uiRow.FindAllStringSubmatch(d.dom, -1) {
		cells := map[string]string{}
		for _, c := range uiCell.FindAllStringSubmatch(r[2], -1) {
			val := c[3]
			if a := regexp.MustCompile(`data-v="([^"]*)"`).FindStringSubmatch(c[2]); a != nil {
				val = a[1]
			}
			cells[strings.Fields(c[1])[len(strings.Fields(c[1]))-1]] = val
			cells[c[1]+" text"] = c[3]
		}
		out[r[1]] = cells
	}
	return out
}

// pollUI reads the dashboard's state until ok says so, or fails after
// the timeout.
func pollUI(t *testing.T, addr string, timeout time.Duration, what string, ok func(live.Snapshot) bool) live.Snapshot {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var snap live.Snapshot
	for {
		resp, err := http.Get("http://" + addr + live.StatePath)
		if err == nil {
			snap = live.Snapshot{}
			err = json.NewDecoder(resp.Body).Decode(&snap)
			resp.Body.Close()
			if err == nil && ok(snap) {
				return snap
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: %v; last state %+v", what, err, snap)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sameFigure compares a page's figure (data-v) with the result's.
func sameFigure(t *testing.T, what string, page, want float64) {
	t.Helper()
	if math.Abs(page-want) > 1e-9*math.Max(1, math.Abs(want)) {
		t.Errorf("%s: the page shows %v, the result has %v", what, page, want)
	}
}

// checkFinal compares the page's figures with a run's result: requests,
// req/s, p50, p99, p99.9 and errors, as numbers and as the text loadgen
// prints.
func checkFinal(t *testing.T, d uiDOM, run *results.Run) {
	t.Helper()
	s := run.Summary
	if d.root["figures"] != "final" {
		t.Fatalf("the page shows %s figures, want the result's: %v", d.root["figures"], d.root)
	}
	sameFigure(t, "requests", d.number(t, "requests"), float64(s.Requests))
	sameFigure(t, "req/s", d.number(t, "rps"), s.RPS)
	sameFigure(t, "errors", d.number(t, "errors"), float64(s.Errors.Total()))
	if text, _ := d.figure(t, "requests"); strings.ReplaceAll(text, ",", "") != strconv.FormatInt(s.Requests, 10) {
		t.Errorf("requests read %q, the result has %d", text, s.Requests)
	}
	for id, l := range map[string]results.Duration{"p50": s.Latency.P50, "p99": s.Latency.P99, "p999": s.Latency.P999} {
		us := d.number(t, id)
		if math.Abs(us*1e3-float64(l)) >= 0.5 {
			t.Errorf("%s: the page shows %v µs, the result has %v", id, us, l.D())
		}
		if text, _ := d.figure(t, id); text != report.Latency(l) {
			t.Errorf("%s reads %q, loadgen prints %q", id, text, report.Latency(l))
		}
	}
}

// uiScreenshot saves a full-page screenshot of the dashboard where
// LOADGEN_SCREENSHOT says (best an absolute path), with suffix before
// its extension: LOADGEN_SCREENSHOT=$PWD/docs/ui.png go test ./cmd/loadgen
// -run UI makes docs/ui.png (the sweep) and docs/ui-run.png.
func uiScreenshot(t *testing.T, bin, url, suffix string, d uiDOM) {
	out := os.Getenv("LOADGEN_SCREENSHOT")
	if out == "" {
		return
	}
	ext := filepath.Ext(out)
	out = strings.TrimSuffix(out, ext) + suffix + ext
	h, _ := strconv.Atoi(d.root["height"])
	h = max(900, min(h+40, 6000))
	abs, _ := filepath.Abs(out)
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		t.Fatal(err)
	}
	uiBrowse(t, bin, url, "--window-size=1400,"+strconv.Itoa(h), "--screenshot="+abs)
	if fi, err := os.Stat(abs); err != nil || fi.Size() < 10000 {
		t.Errorf("screenshot %s: %v", abs, err)
	}
}

// startUICommand runs loadgen with args in the background; stop ends its
// --ui-linger (as Ctrl-C does) and returns its exit status and stderr.
func startUICommand(t *testing.T, args ...string) (stop func() (int, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- execute(ctx, args, &stdout, &stderr) }()
	stopped := false
	stop = func() (int, string) {
		if !stopped {
			stopped = true
			cancel()
		}
		select {
		case code := <-done:
			done <- code
			return code, stderr.String()
		case <-time.After(30 * time.Second):
			t.Fatalf("loadgen %s did not exit", strings.Join(args, " "))
			return 0, ""
		}
	}
	t.Cleanup(func() { stop() })
	return stop
}

// run --ui: headless Chromium loads the dashboard while the run goes,
// and sees it live (figures, charts); once the run is over, the page's
// figures are the run's JSON's.
//
// Chromium's start can outlast a run on a busy machine: when the run was
// over by the time the browser returned, and the page says so, nothing
// was seen live, and the test runs again, longer (bounded: 6 s, 20 s,
// 60 s). A page that says "done" while the run still goes fails at once.
func TestUIRunInBrowser(t *testing.T) {
	bin := uiChromium(t)
	url := startHTTPBin(t) + "/get"
	var (
		addr, out, page string
		stop            func() (int, string)
		d               uiDOM
		dur             time.Duration
	)
	runs := []time.Duration{6 * time.Second, 20 * time.Second, time.Minute}
	for i := range runs {
		dur = runs[i]
		addr = testport.Held(t)
		out = filepath.Join(t.TempDir(), "out.json")
		stop = startUICommand(t, "run", "-q", "-c", "2", "-t", "1", "-d", dur.String(), "-R", "300", "--ui", addr, "--ui-linger", "60s", "--json", out, url)
		page = "http://" + addr + "/"
		pollUI(t, addr, 10*time.Second, "the run's first second", func(s live.Snapshot) bool {
			return s.Run != nil && s.Run.State == "running" && len(s.Run.Timeline) > 0
		})
		d = parseUI(t, uiBrowse(t, bin, page, "--window-size=1400,1000", "--dump-dom"))
		after := pollUI(t, addr, time.Second, "the state", func(live.Snapshot) bool { return true })
		if !after.Done || d.root["done"] != "yes" {
			break // the page saw the run going (or claims it over while it goes: a failure below)
		}
		if i == len(runs)-1 {
			t.Fatalf("the browser saw each run only after it ended (the last of %s): nothing was seen live", dur)
		}
		t.Logf("the browser came after the %s run ended: again, longer", dur)
		stop()
	}
	if d.root["figures"] != "live" || d.root["connected"] != "yes" || d.root["done"] != "no" || d.root["polls"] == "0" {
		t.Errorf("while the run goes: %v", d.root)
	}
	if n := d.number(t, "requests"); n <= 0 {
		t.Errorf("live requests %v", n)
	}
	if n := d.number(t, "asked"); n != 300 {
		t.Errorf("asked %v, want 300", n)
	}
	if d.root["charts-drawn"] == "" || d.root["charts-drawn"] == "0" {
		t.Errorf("no chart drawn live: %v", d.root)
	}

	pollUI(t, addr, dur+15*time.Second, "the end of the run", func(s live.Snapshot) bool { return s.Done })
	run, err := store.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	d = parseUI(t, uiBrowse(t, bin, page, "--window-size=1400,1000", "--dump-dom"))
	if d.root["done"] != "yes" || d.root["charts-drawn"] != "4" {
		t.Errorf("at the end: %v", d.root)
	}
	checkFinal(t, d, run)
	sameFigure(t, "asked", d.number(t, "asked"), run.Summary.Pacing.Asked)
	if status, _ := d.figure(t, "status"); status != "done" {
		t.Errorf("status %q", status)
	}
	uiScreenshot(t, bin, page, "-run", d)

	code, stderr := stop()
	if code != 0 {
		t.Errorf("exit %d (Ctrl-C during --ui-linger keeps the run's status): %s", code, stderr)
	}
	if !strings.Contains(stderr, "live dashboard on http://"+addr+"/") {
		t.Errorf("the address is not said: %s", stderr)
	}
}

// sweep --ui: the table fills in step by step, and at the end holds both
// steps with their results' figures; the figures above it are the last
// step's.
func TestUISweepInBrowser(t *testing.T) {
	bin := uiChromium(t)
	base := startHTTPBin(t)
	addr := testport.Held(t)
	dir := filepath.Join(t.TempDir(), "s")
	stop := startUICommand(t, "sweep", "-q", "--path", "baseline="+base, "--ladder", "c1t1..c2t2", "--payloads", "100",
		"-d", "2s", "-o", dir, "--ui", ":"+strings.Split(addr, ":")[1], "--ui-linger", "60s")
	page := "http://" + addr + "/"
	ids := []string{"baseline_c1t1_100B_closed_r1", "baseline_c2t2_100B_closed_r1"}

	// Between the steps: the first in the table, the second running.
	pollUI(t, addr, 15*time.Second, "the second step", func(s live.Snapshot) bool {
		return len(s.Steps) == 1 && s.Run != nil && s.Run.Step == ids[1]
	})
	d := parseUI(t, uiBrowse(t, bin, page, "--window-size=1400,1000", "--dump-dom"))
	rows := d.rows()
	if rows[ids[0]] == nil || rows[ids[0]]["rps"] == "" {
		t.Errorf("mid-sweep: %v, rows %v", d.root, rows)
	}
	if d.root["done"] == "no" && (rows[ids[1]] == nil || !strings.Contains(d.dom, `class="running"`)) {
		t.Errorf("mid-sweep, the running step has no row: %v", rows)
	}

	pollUI(t, addr, 15*time.Second, "the end of the sweep", func(s live.Snapshot) bool { return s.Done })
	d = parseUI(t, uiBrowse(t, bin, page, "--window-size=1400,1000", "--dump-dom"))
	rows = d.rows()
	if d.root["steps"] != "2" || len(rows) != 2 {
		t.Fatalf("%s steps, rows %v", d.root["steps"], rows)
	}
	var last *results.Run
	for _, id := range ids {
		st, err := store.ReadStep(filepath.Join(dir, sweep.StepsDir, id+".json"))
		if err != nil {
			t.Fatal(err)
		}
		s, row := st.Run.Summary, rows[id]
		for col, want := range map[string]float64{"rps": s.RPS, "errors": float64(s.Errors.Total()),
			"p50": float64(s.Latency.P50) / 1e3, "p99": float64(s.Latency.P99) / 1e3} {
			got, err := strconv.ParseFloat(row[col], 64)
			if err != nil || math.Abs(got-want) > 1e-9*math.Max(1, want) {
				t.Errorf("%s %s: the page shows %q, the step has %v", id, col, row[col], want)
			}
		}
		if row["l path"+" text"] != "baseline" || row["p99 text"] != report.Latency(s.Latency.P99) {
			t.Errorf("%s: %v", id, row)
		}
		last = st.Run
	}
	checkFinal(t, d, last)
	if status, _ := d.figure(t, "status"); status != "done" {
		t.Errorf("status %q", status)
	}
	uiScreenshot(t, bin, page, "", d)

	if code, stderr := stop(); code != 0 {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// --ui refuses an address it cannot listen on before any load, and a
// bad --ui-linger.
func TestUIFlags(t *testing.T) {
	url := startHTTPBin(t) + "/get"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-d", "1s", "--ui", "nonsense", url}, "--ui nonsense"},
		{[]string{"run", "-d", "1s", "--ui", "127.0.0.1:0", "--ui-linger=-1s", url}, "--ui-linger"},
	} {
		code, stdout, stderr := cli(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) || strings.Contains(stdout, "Running") {
			t.Errorf("%v: exit %d, %s%s", c.args, code, stdout, stderr)
		}
	}
}

// k8s run --ui: the coordinator's lines and each finished step reach the
// page (Coordinator.OnStep), the last step's result in its figures; the
// page says that no per-second data comes while a step runs.
func TestUIK8sRunFeed(t *testing.T) {
	st := live.New(live.KindK8sRun, "k8s run")
	said := 0
	co := &run.Coordinator{Steps: make([]k8s.Step, 2), Events: func(string, ...any) { said++ }}
	k8sUI(st, co)
	co.Events("step %d/%d %s: %d workers", 1, 2, "baseline_c1t1_100B_closed_r1", 4)
	r := &results.Run{Summary: results.Summary{Requests: 1000, RPS: 100, Duration: results.Duration(10 * time.Second)},
		Timeline: []results.Interval{{Duration: results.Duration(10 * time.Second), Requests: 1000, RPS: 100}}}
	co.OnStep(&results.Step{ID: "baseline_c1t1_100B_closed_r1", Path: "baseline", Rung: "c1t1", Payload: 100, Run: r})
	co.OnStep(&results.Step{Index: 1, ID: "baseline_c2t2_100B_closed_r1", Path: "baseline", Rung: "c2t2", Payload: 100, Failed: "2 of 4 workers started late"})
	snap := st.Snapshot()
	if said != 1 || len(snap.Events) != 1 || !strings.Contains(snap.Events[0], "4 workers") {
		t.Errorf("events: said %d, %v", said, snap.Events)
	}
	if len(snap.Steps) != 2 || snap.Steps[1].Failed == "" || snap.Planned != 2 {
		t.Errorf("steps: %+v", snap.Steps)
	}
	if snap.Run == nil || snap.Run.Final == nil || snap.Run.Final.Requests != 1000 || snap.Run.Step != "baseline_c1t1_100B_closed_r1" {
		t.Errorf("the last finished step's figures: %+v", snap.Run)
	}
	if !strings.Contains(snap.Note, "no per-second data") {
		t.Errorf("note: %q", snap.Note)
	}
}
