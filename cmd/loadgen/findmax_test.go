package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"loadgen/internal/testport"
	"loadgen/loadgen/sweep"
	"loadgen/results"
	"loadgen/results/store"
)

// The find-max table prints each search's bracket (sweep.Bracket) as
// aligned rows under the columns and the legend, its notes under them.
func TestFindMaxTable(t *testing.T) {
	long := "p99 812.4ms is not < 10ms because the machine was busy doing something else for a very long while"
	maxes := []sweep.Max{
		{Path: "baseline", Rung: "c16t2", Payload: 100, Rate: 3100, P99: sweep.Micros(1200 * time.Microsecond),
			Pass:   &sweep.Verdict{Rate: 3100, OK: true, Probes: 3, Passed: 2, Judged: 1},
			Fail:   &sweep.Verdict{Rate: 3200, Probes: 2, Why: long, Judged: 2},
			Probes: make([]sweep.Probe, 14),
			Machine: &sweep.MachineState{CPUs: 2, Measured: 14, UtilizationMin: 0.35, UtilizationMedian: 0.6, UtilizationMax: 0.98,
				MachineSaturated: 2, GeneratorSaturated: 1},
			Contended:          []sweep.Contended{{ID: "x", Rate: 3100, Attempt: 2, Flags: "M"}, {ID: "y", Rate: 6400, Attempt: 1, Flags: "GM"}},
			MeasuresContention: true},
		{Path: "nginx", Rung: "c16t2", Payload: 100, Failed: "cannot connect to http://127.0.0.1:1: connection refused", Probes: make([]sweep.Probe, 1)},
		{Path: "fast", Rung: "c16t2", Payload: 100, Rate: 2e6, P99: sweep.Micros(900 * time.Microsecond),
			Pass:    &sweep.Verdict{Rate: 2e6, OK: true, Probes: 2, Passed: 2, Judged: 1},
			Probes:  make([]sweep.Probe, 15),
			Machine: &sweep.MachineState{CPUs: 2, Measured: 15, UtilizationMin: 0.3, UtilizationMedian: 0.31, UtilizationMax: 0.33}},
	}
	var b bytes.Buffer
	if err := findMaxTable(&b, maxes, false, results.SchemaVersion); err != nil {
		t.Fatal(err)
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
	if got := strings.Join(fields("baseline"), " "); got != "100B c16t2 baseline 3100 1.20ms 2/3 3200 2/2 14 GM" {
		t.Errorf("baseline row %q", got)
	}
	if got := strings.Join(fields("nginx"), " "); got != "100B c16t2 nginx failed — — — — 1" {
		t.Errorf("nginx row %q", got)
	}
	if got := strings.Join(fields("fast"), " "); got != "100B c16t2 fast 2000000 900us 2/2 — — 15" {
		t.Errorf("fast row %q", got)
	}
	// The notes (sweep.Bracket's, tested there) follow the legend, indented.
	for _, want := range []string{
		"\ncontention\n  baseline c16t2 100B at 3200/s: " + long,
		"\n  nginx c16t2 100B: failed: cannot connect",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
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
	code, out, stderr := cli(t, "sweep", "--path", "baseline=http://"+testport.Closed(t), "--ladder", "c1t1", "--payloads", "100",
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

// A search against a target bounded by its delay (httpbin's /delay/10ms
// over 2 connections: at most 200/s) writes findmax.json in the result
// format (docs/schema/findmax.schema.json): numbers with units in their
// keys, the rate reported confirmed by two probes that held, the
// machine's state during the search; the table and the report say the
// same.
func TestFindMaxJSON(t *testing.T) {
	url := startHTTPBin(t)
	dir := t.TempDir() + "/fm"
	code, out, stderr := cli(t, "sweep", "--path", "baseline="+url, "--ladder", "c2t1", "--payloads", "0", "--endpoint", "/delay/10ms",
		"-d", "250ms", "--warmup", "100ms", "-R", "150", "--find-max", "--slo", "p90<20ms", "-o", dir, "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, stderr, out)
	}
	t.Log("\n" + out)
	file := filepath.Join(dir, sweep.FindMaxFileName)
	checkSchema(t, "findmax", file)
	f, err := sweep.ReadFindMax(file)
	if err != nil || len(f.Searches) != 1 || f.Schema != results.SchemaVersion || f.SLO != "p90<20ms" {
		t.Fatalf("%s: %+v, %v", file, f, err)
	}
	m := f.Searches[0]
	if m.Rate <= 0 || m.Rate > 220 || !m.Pass.Confirmed() || m.Pass.Rate != m.Rate || m.P99 <= 0 {
		t.Fatalf("reported %g/s (p99 %v), highest held %+v", m.Rate, m.P99.D(), m.Pass)
	}
	if m.Machine == nil || m.Machine.Measured != len(m.Probes) || m.Machine.CPUs < 1 {
		t.Errorf("machine during the search: %+v", m.Machine)
	}
	var raw struct {
		Searches []map[string]any `json:"searches"`
	}
	if b, err := os.ReadFile(file); err != nil || json.Unmarshal(b, &raw) != nil || len(raw.Searches) != 1 {
		t.Fatalf("%s: %v, %d searches", file, err, len(raw.Searches))
	}
	if rate, ok := raw.Searches[0]["max_rps"].(float64); !ok || rate != m.Rate {
		t.Errorf("max_rps %v", raw.Searches[0]["max_rps"])
	}
	if p99, ok := raw.Searches[0]["p99_at_max_us"].(float64); !ok || p99 != float64(m.P99)/1e3 {
		t.Errorf("p99_at_max_us %v", raw.Searches[0]["p99_at_max_us"])
	}
	row := fmt.Sprintf("baseline %.0f", m.Rate)
	held := fmt.Sprintf("%d/%d", m.Pass.Passed, m.Pass.Probes)
	if !strings.Contains(strings.Join(strings.Fields(out), " "), row) || !strings.Contains(out, held) || !strings.Contains(out, "baseline c2t1 0B: the machine during the search") {
		t.Errorf("no row %q held %s, or no machine note:\n%s", row, held, out)
	}
	if m.MeasuresContention != strings.Contains(out, "MEASURES CONTENTION") {
		t.Errorf("measures contention %v (%+v), but the table says so: %v", m.MeasuresContention, m.Contended, !m.MeasuresContention)
	}
	code, md, stderr := cli(t, "report", dir)
	if code != 0 || !strings.Contains(md, "| flags |") || !strings.Contains(md, "| "+held+" |") || !strings.Contains(md, "the machine during the search") {
		t.Errorf("report: exit %d, %s\n%s", code, stderr, md)
	}
}

// findmax.schema.json documents every field findmax.json may hold.
func TestFindMaxSchemaEveryField(t *testing.T) {
	machine := &results.MachineCost{CPUs: 2, BusyCores: 1.9, Utilization: 0.95, Saturated: true}
	v := &sweep.Verdict{Rate: 100, OK: true, Probes: 3, Passed: 2, Judged: 1, Why: "p99"}
	f := sweep.FindMaxFile{Schema: results.SchemaVersion, Tool: "loadgen", SLO: "p99<1ms", Interrupted: true, Searches: []sweep.Max{{
		Path: "a", Rung: "c1t1", Payload: 100, Rate: 100, P99: sweep.Micros(1234567), Pass: v, Fail: v, Failed: "x",
		Probes: []sweep.Probe{{Rate: 100, Attempt: 1, OK: true, Why: "p99", ID: "a_c1t1_100B_r100_r1", P99: sweep.Micros(1500),
			Generator: &sweep.GeneratorState{Utilization: 0.95, Saturated: true}, Machine: machine}},
		Machine: &sweep.MachineState{CPUs: 2, Measured: 1, UtilizationMin: 0.95, UtilizationMedian: 0.95, UtilizationMax: 0.95,
			MachineSaturated: 1, GeneratorSaturated: 1},
		Contended:          []sweep.Contended{{ID: "a_c1t1_100B_r100_r1", Rate: 100, Attempt: 1, Flags: "GM"}},
		MeasuresContention: true,
	}}}
	file := filepath.Join(t.TempDir(), sweep.FindMaxFileName)
	if err := store.WriteJSON(file, f); err != nil {
		t.Fatal(err)
	}
	checkSchema(t, "findmax", file)
}
