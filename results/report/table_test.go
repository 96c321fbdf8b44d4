package report

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"loadgen/results"
)

// failingSweep is the demo sweep with what goes wrong in real ones: a path
// that cannot be reached for a whole payload, a step interrupted before
// its measured window, and a step whose every request timed out.
func failingSweep(t *testing.T) *Sweep {
	s := readSweep(t, sweepDir)
	for _, st := range s.Steps {
		switch {
		case st.Path == "nginx" && st.Payload == 1024:
			st.Run, st.Watched = nil, nil
			st.Failed = "cannot connect to http://127.0.0.1:8081/bytes/1024: dial tcp 127.0.0.1:8081: connect: connection refused"
		case st.Path == "baseline" && st.Rung == "c64t64" && st.Payload == 100:
			st.Run.Interrupted = true
			st.Run.Summary = results.Summary{}
		case st.Path == "nginx" && st.Rung == "c16t16" && st.Payload == 100:
			st.Run.Summary.Requests, st.Run.Summary.RPS = 0, 0
			st.Run.Summary.Errors = results.Errors{Timeout: 512}
		}
	}
	return s
}

func sweepTable(t *testing.T, s *Sweep, opt TableOptions) string {
	t.Helper()
	return string(render(t, func(b *bytes.Buffer) error { return SweepTable(b, s.Baseline(), s.Steps, opt) }))
}

// The text tables, at the default 120 columns and with every column, in
// each protocol's own units, and with failures.
func TestSweepTableGolden(t *testing.T) {
	cni := fixtureCNI(t)
	for _, tc := range []struct {
		file string
		s    *Sweep
		opt  TableOptions
	}{
		{"sweep.txt", fixtureSweep(t)[0], TableOptions{}},
		{"sweep-wide.txt", fixtureSweep(t)[0], TableOptions{Wide: true}},
		{"sweep-80.txt", fixtureSweep(t)[0], TableOptions{Width: 80}},
		{"failures.txt", failingSweep(t), TableOptions{}},
		{"tcp-rr.txt", cni[0], TableOptions{}},
		{"tcp-crr.txt", cni[1], TableOptions{}},
		{"tcp-stream.txt", cni[2], TableOptions{}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			out := sweepTable(t, tc.s, tc.opt)
			golden(t, tc.file, []byte(out))
			width := tc.opt.Width
			if width == 0 {
				width = DefaultWidth
			}
			for _, l := range strings.Split(out, "\n") {
				if n := utf8.RuneCountInString(l); n > width && !tc.opt.Wide {
					t.Errorf("a line of %d columns, wider than %d: %q", n, width, l)
				}
			}
		})
	}
}

// What a reader needs first is always there; the rest joins as the width
// allows; --wide shows every column that has a figure; a column nobody
// has a figure for is left out.
func TestSweepTableColumns(t *testing.T) {
	s := fixtureSweep(t)[0]
	head := func(out string) []string {
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, "step") {
				return strings.Fields(l)
			}
		}
		t.Fatalf("no header:\n%s", out)
		return nil
	}
	first := []string{"step", "path", "req/s", "p50", "p99", "errors", "+p99", "cpu/1k"} // no flags: none is set
	narrow := head(sweepTable(t, s, TableOptions{Width: 40}))
	if strings.Join(narrow, " ") != strings.Join(first, " ") {
		t.Errorf("at 40 columns: %v, want the first columns %v", narrow, first)
	}
	wide := strings.Join(head(sweepTable(t, s, TableOptions{Wide: true})), " ")
	for _, want := range []string{"p90", "p99.9", "timeouts", "+p50", "+p90", "+p99.9", "+cpu/1k", "+MiB", "proxy cpu", "proxy MiB", "target cpu", "gen cpu"} {
		if !strings.Contains(" "+wide+" ", " "+want+" ") {
			t.Errorf("--wide lacks %s: %s", want, wide)
		}
	}
	def := head(sweepTable(t, s, TableOptions{}))
	if len(def) <= len(first) || len(def) >= len(strings.Fields(wide)) {
		t.Errorf("at 120 columns %d columns: want more than the %d first and fewer than all", len(def), len(first))
	}
	stream := head(sweepTable(t, fixtureCNI(t)[2], TableOptions{Wide: true}))
	if strings.Join(stream, " ") != "step path Gbit/s errors timeouts gen cpu" {
		t.Errorf("tcp-stream columns %v: throughput in Gbit/s, no write latency, nothing unwatched", stream)
	}
	udp := *fixtureCNI(t)[2]
	udp.Steps = nil
	for _, st := range fixtureCNI(t)[2].Steps {
		c, run := *st, *st.Run
		run.Config.Protocol, c.Run = "udp-stream", &run
		udp.Steps = append(udp.Steps, &c)
	}
	if got := head(sweepTable(t, &udp, TableOptions{Wide: true})); strings.Join(got, " ") != strings.Join(stream, " ") {
		t.Errorf("udp-stream columns %v, want tcp-stream's %v", got, stream)
	}
}

// A failed path's reason is one note under the table, not a column; an
// interrupted step says so; a step nothing answered has no latency.
func TestSweepTableFailures(t *testing.T) {
	out := sweepTable(t, failingSweep(t), TableOptions{})
	// row finds the row of rung and path under the block title, by column head.
	row := func(title, rung, path string) map[string]string {
		var head []string
		in := false
		for _, l := range strings.Split(out, "\n") {
			f := strings.Fields(l)
			switch {
			case strings.HasPrefix(l, "payload"):
				in = l == title
			case len(f) > 0 && f[0] == "step":
				head = f
			case in && len(f) > 2 && f[0] == rung && f[1] == path:
				m := map[string]string{}
				for i, h := range head {
					if i < len(f) {
						m[h] = f[i]
					}
				}
				m["fields"] = strings.Join(f, " ")
				return m
			}
		}
		t.Fatalf("no row %s %s in %s:\n%s", rung, path, title, out)
		return nil
	}
	if r := row("payload 1 KiB", "c4t4", "nginx"); r["fields"] != "c4t4 nginx failed F" {
		t.Errorf("failed row %q: want only its state and flag", r["fields"])
	}
	if strings.Count(out, "connection refused") != 1 || !strings.Contains(out, "nginx at c1t1 1 KiB, c4t4 1 KiB, c16t16 1 KiB, c64t64 1 KiB: failed: cannot connect") {
		t.Errorf("want one note naming the failed steps:\n%s", out)
	}
	if r := row("payload 100 B", "c64t64", "baseline"); r["fields"] != "c64t64 baseline interrupted I" {
		t.Errorf("interrupted row %q", r["fields"])
	}
	// Nothing answered: the step failed, whatever figures its failures have.
	if r := row("payload 100 B", "c16t16", "nginx"); r["fields"] != "c16t16 nginx failed F" {
		t.Errorf("unanswered row %v: want it failed", r)
	}
	if !strings.Contains(out, "nginx at c16t16 100 B: failed: no request succeeded: 512 of 512 failed") {
		t.Errorf("no note on the unanswered step:\n%s", out)
	}
	if strings.Contains(out, "0.00us") || !strings.Contains(out, "interrupted before it measured anything") {
		t.Errorf("a zero latency, or no note on the interrupted step:\n%s", out)
	}
}

// A lab's page opens with the CNI matrix: its raw TCP sweeps have no
// per-path cards (the matrix is their summary), and next to an HTTP
// sweep's cards the matrix still comes first.
func TestHTMLOpensWithCNIMatrix(t *testing.T) {
	page := func(sweeps []*Sweep) string {
		return string(render(t, func(b *bytes.Buffer) error { return HTML(b, sweeps, Options{}) }))
	}
	lab := page(fixtureCNI(t))
	if !strings.Contains(lab, `<section id="cni">`) || strings.Contains(lab, `class="glance"`) {
		t.Error("a lab's page: want the matrix and no cards")
	}
	mixed := page(append(fixtureCNI(t), fixtureSweep(t)...))
	cni, cards := strings.Index(mixed, `<section id="cni">`), strings.Index(mixed, `class="glance"`)
	if cni < 0 || cards < 0 || cni > cards || strings.Count(mixed, `class="card"`) != 2 {
		t.Errorf("matrix at %d, cards at %d, %d cards: want the matrix first and the HTTP sweep's two cards", cni, cards, strings.Count(mixed, `class="card"`))
	}
}

// A sweep with no baseline path has no added columns, and says why and
// what to name, under the table (text, Markdown and HTML share its notes).
func TestSweepTableNoBaseline(t *testing.T) {
	s := fixtureSweep(t)[0]
	out := string(render(t, func(b *bytes.Buffer) error { return SweepTable(b, "", s.Steps, TableOptions{Wide: true}) }))
	want := "no latency or cost added over a baseline (+pNN, +cpu): no path is the baseline; name the direct one baseline"
	if !strings.Contains(strings.Join(strings.Fields(out), " "), want) || strings.Contains(out, "+p99") {
		t.Errorf("text:\n%s", out)
	}
	if with := sweepTable(t, s, TableOptions{Wide: true}); strings.Contains(with, "no path is the baseline") {
		t.Errorf("a sweep with its baseline warned:\n%s", with)
	}
}

// An ingress sizing (every step at a worker count) is the same proxy at
// each count: no baseline to name, so no note asking for one.
func TestSweepTableSizingNoBaselineNote(t *testing.T) {
	s := fixtureSweep(t)[0]
	for i, st := range s.Steps {
		cp := *st
		cp.Workers = 1 + i%2
		s.Steps[i] = &cp
	}
	out := string(render(t, func(b *bytes.Buffer) error { return SweepTable(b, "", s.Steps, TableOptions{Wide: true}) }))
	if strings.Contains(out, "no path is the baseline") {
		t.Errorf("a sizing asked for a baseline:\n%s", out)
	}
}
