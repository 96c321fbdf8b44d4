package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"loadgen/loadgen/sweep"
)

// The find-max table gives each search's bracket and the probes each end
// rests on; why the failing end failed is a note, not a column.
func TestFindMaxTable(t *testing.T) {
	long := "p99 812.4ms is not < 10ms because the machine was busy doing something else for a very long while"
	maxes := []sweep.Max{
		{Path: "baseline", Rung: "c16t2", Payload: 100, Rate: 3100, P99: "1.2ms",
			Pass:   &sweep.Verdict{Rate: 3100, OK: true, Probes: 3, Passed: 2},
			Fail:   &sweep.Verdict{Rate: 3200, Probes: 2, Why: long},
			Probes: make([]sweep.Probe, 14), Saturated: 5},
		{Path: "nginx", Rung: "c16t2", Payload: 100, Failed: "cannot connect to http://127.0.0.1:1: connection refused", Probes: make([]sweep.Probe, 1)},
		{Path: "fast", Rung: "c16t2", Payload: 100, Rate: 2e6, P99: "900us", Pass: &sweep.Verdict{Rate: 2e6, OK: true, Probes: 1, Passed: 1}, Probes: make([]sweep.Probe, 15)},
	}
	var b bytes.Buffer
	if err := findMaxTable(&b, maxes, false); err != nil {
		t.Fatal(err)
	}
	var stopped bytes.Buffer
	if err := findMaxTable(&stopped, maxes[2:], true); err != nil || !strings.Contains(stopped.String(), "interrupted with 2000000/s held") {
		t.Errorf("an interrupted search: %v\n%s", err, stopped.String())
	}
	out := b.String()
	t.Log("\n" + out)
	lines := strings.Split(out, "\n")
	fields := func(prefix string) []string {
		for _, l := range lines {
			if f := strings.Fields(l); len(f) > 2 && f[2] == prefix {
				return f
			}
		}
		t.Fatalf("no row for %s:\n%s", prefix, out)
		return nil
	}
	if got := strings.Join(fields("baseline"), " "); got != "100B c16t2 baseline 3100 1.20ms 2/3 3200 2/2 14" {
		t.Errorf("baseline row %q", got)
	}
	if got := strings.Join(fields("nginx"), " "); got != "100B c16t2 nginx failed — — — — 1" {
		t.Errorf("nginx row %q", got)
	}
	if got := strings.Join(fields("fast"), " "); got != "100B c16t2 fast 2000000 900us 1/1 — — 15" {
		t.Errorf("fast row %q", got)
	}
	for _, want := range []string{"baseline c16t2 100B at 3200/s: " + long, "nginx c16t2 100B: failed: cannot connect", "fast c16t2 100B: held up to the search's ceiling",
		"baseline c16t2 100B: the machine's CPUs were saturated during 5 of the 14 probes"} {
		if !strings.Contains(out, want) {
			t.Errorf("no note %q", want)
		}
	}
	for _, l := range lines {
		if strings.Contains(l, "\t") || (utf8.RuneCountInString(l) > 120 && !strings.HasPrefix(l, "  ")) {
			t.Errorf("a table line is wider than 120 columns: %q", l)
		}
	}
}

// An unreachable path ends its search at the first probe (probing again
// or lower would not change it), says so, and fails the command; the
// progress counts probes, not "[n/0]".
func TestFindMaxUnreachablePath(t *testing.T) {
	code, out, stderr := cli(t, "sweep", "--path", "baseline=http://"+closedPort(t), "--ladder", "c1t1", "--payloads", "100",
		"-d", "200ms", "--find-max", "--slo", "p99<1s", "-o", t.TempDir()+"/fm")
	if code != exitFail {
		t.Errorf("exit %d, want %d\n%s%s", code, exitFail, out, stderr)
	}
	if !strings.Contains(stderr, "probe 1, search 1/1: baseline c1t1 100B at 100/s: misses the SLO") || strings.Contains(stderr, "/0]") || strings.Contains(stderr, "probe 2") {
		t.Errorf("progress:\n%s", stderr)
	}
	if !strings.Contains(out, "baseline c1t1 100B: failed: cannot connect") || !strings.Contains(stderr, "no run on baseline c1t1 100B") {
		t.Errorf("output:\n%s\nstderr:\n%s", out, stderr)
	}
}

// An SLO that no rate holds: the search halves down to 1/s, stops, and
// says none held.
func TestFindMaxNothingHolds(t *testing.T) {
	url := startHTTPBin(t)
	dir := t.TempDir() + "/fm"
	code, out, stderr := cli(t, "sweep", "--path", "baseline="+url, "--ladder", "c1t1", "--payloads", "100",
		"-d", "100ms", "--find-max", "--slo", "p99<1ns", "-o", dir, "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "baseline       none") || !strings.Contains(out, "baseline c1t1 100B at 1/s: p99") {
		t.Errorf("output:\n%s", out)
	}
	// Its report begins with what the search found, as the sweep said it.
	code, md, stderr := cli(t, "report", dir)
	if code != 0 || !strings.Contains(md, "the highest open-loop rate holding the SLO") || !strings.Contains(md, "| 100B | c1t1 | baseline | none |") ||
		!strings.Contains(md, "- baseline c1t1 100B at 1/s: p99") ||
		strings.Contains(md, "closed loop") || !strings.Contains(md, "open loop at the rates a find-max search probed") {
		t.Errorf("report: exit %d, %s\n%s", code, stderr, md)
	}
	// The HTML report begins with the same bracket.
	html := t.TempDir() + "/r.html"
	if code, _, stderr := cli(t, "report", dir, "--html", html); code != 0 {
		t.Fatalf("report --html: exit %d: %s", code, stderr)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	body := string(page)
	at := strings.Index(body, `<section id="findmax-0">`)
	if at < 0 || !strings.Contains(body, "<td>none</td>") || !strings.Contains(body, "baseline c1t1 100B at 1/s: p99") ||
		at > strings.Index(body, "<section id=\"") {
		t.Errorf("HTML report has no find-max bracket first:\n%s", body)
	}
}
