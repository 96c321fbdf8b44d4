package report

import (
	"encoding/json"
	"html"
	"regexp"
	"strings"
	"testing"

	"loadgen/results"
	"loadgen/results/store"
)

// fixtureKilledRun is a real result: testdata/killed/run.json is `loadgen
// run -c 2 -t 1 -d 4s --warmup 500ms` of loadgen's httpbin, killed 2 s
// after the run began (1.5 s into its window), on a machine whose CPUs
// were saturated.
func fixtureKilledRun(t testing.TB) []*Sweep {
	t.Helper()
	run, err := store.ReadRun("testdata/killed/run.json")
	if err != nil {
		t.Fatal(err)
	}
	return []*Sweep{SingleRun("killed.json", run)}
}

// fragments are the parts of page that re match, one a line.
func fragments(page string, res ...*regexp.Regexp) string {
	var out []string
	for _, re := range res {
		out = append(out, re.FindAllString(page, -1)...)
	}
	return strings.Join(out, "\n") + "\n"
}

var (
	mastFacts   = regexp.MustCompile(`(?s)<dl class="facts">.*?</dl>`)
	runStatus   = regexp.MustCompile(`(?s)<p class="note warn[^"]*">.*?</p>`)
	outageBand  = regexp.MustCompile(`<rect class="outage"[^>]*><title>[^<]*</title></rect>`)
	tocNav      = regexp.MustCompile(`(?s)<nav class="toc">.*?</nav>`)
	errorsTitle = regexp.MustCompile(`<figcaption><span class="ctitle">Errors and timeouts</span><span class="cnote">[^<]*</span></figcaption>`)
)

// The HTML of a run whose target was killed says the run failed and why,
// first thing, with its flags (F failed, M machine saturated) as the
// tables show them, and shades the outage from when it began (1.5 s into
// the window, mid-interval), not from the first interval with no answer.
func TestHTMLKilledRun(t *testing.T) {
	page := htmlOf(t, fixtureKilledRun(t))
	got := fragments(page, mastFacts, runStatus, outageBand)
	golden(t, "killed/run-status.html", []byte(got))
	for _, want := range []string{
		"<dd>failed</dd>",
		"The run failed: the target stopped answering",
		`<span class="flag flag-F" title="failed: `, `<span class="flag flag-M" title="machine saturated: `,
		"Machine saturated: the machine&#39;s CPUs were ≥90% busy",
		"<title>outage from 1.5s to 4s: nothing answered, 141 requests failed</title>",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the page lacks %q:\n%s", want, got)
		}
	}
	if strings.Index(page, "The run failed") > strings.Index(page, `<table class="summary">`) {
		t.Error("the failure comes after the figures")
	}
}

// stepLike is a copy of one of the demo sweep's steps, path and repeat
// changed.
func stepLike(t *testing.T, s *Sweep, id string) *results.Step {
	t.Helper()
	for _, st := range s.Steps {
		if st.ID == id {
			c := *st
			if st.Run != nil {
				r := *st.Run
				c.Run = &r
			}
			return &c
		}
	}
	t.Fatalf("no step %s", id)
	return nil
}

// sweepOf is a sweep of steps whose manifest plans planned step IDs and
// holds spec (the manifest's, by default the demo sweep's).
func sweepOf(t *testing.T, spec string, planned []string, steps ...*results.Step) *Sweep {
	t.Helper()
	demo := fixtureSweep(t)[0]
	m := *demo.Manifest
	m.Steps = planned
	if spec != "" {
		m.Spec = json.RawMessage(spec)
	}
	return &Sweep{Name: "s", Manifest: &m, Steps: steps}
}

// The page counts steps as the sweep did: one that ran but in which no
// request succeeded failed, as one that could not connect; an aborted one
// and those never run are said so, not "complete". The errors chart of a
// block whose steps failed whole does not say there were no failures.
func TestHTMLStepCounts(t *testing.T) {
	demo := fixtureSweep(t)[0]
	ok := stepLike(t, demo, "baseline_c1t1_100B_closed_r1")
	notFound := stepLike(t, demo, "nginx_c1t1_100B_closed_r1")
	s := &notFound.Run.Summary
	s.Status, s.Errors = map[int]int64{404: s.Requests}, results.Errors{Status: s.Requests}
	dead := stepLike(t, demo, "nginx_c4t4_100B_closed_r1")
	dead.Run, dead.Failed = nil, "cannot connect to http://127.0.0.1:42555/bytes/100: connection refused"
	failed := sweepOf(t, "", []string{ok.ID, notFound.ID, dead.ID}, ok, notFound, dead)

	aborted := stepLike(t, demo, "nginx_c1t1_100B_closed_r1")
	aborted.Run.Aborted, aborted.Run.Interrupted = "aborted at 3.0 s: p99<1ms broke (p99 2.32ms over 0.0–3.0 s)", true
	stopped := sweepOf(t, "", []string{ok.ID, aborted.ID, "nginx_c4t4_100B_closed_r1"}, ok, aborted)

	pf, ps := htmlOf(t, []*Sweep{failed}), htmlOf(t, []*Sweep{stopped})
	got := fragments(pf, mastFacts, errorsTitle) + fragments(ps, mastFacts)
	golden(t, "reports/step-counts.html", []byte(got))
	for _, want := range []string{
		"<dd>1 of 3 ok, 2 failed</dd>", "<dd>1 of 3 ok, 1 aborted, 1 not run</dd>",
		"not plotted, failed whole: nginx c1t1, nginx c4t4 (" + thousands(float64(s.Requests)) + " failed requests)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the pages lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "no failed requests") || strings.Contains(got, "complete") {
		t.Errorf("the pages hide the failures:\n%s", got)
	}
}

// A sweep through sidecars has a worker count per proxy: it is no ingress
// sizing, whose table only loadgen size's results get.
func TestHTMLSizingOnlyForSize(t *testing.T) {
	demo := fixtureSweep(t)[0]
	var steps []*results.Step
	for _, id := range []string{"baseline_c1t1_100B_closed_r1", "nginx_c1t1_100B_closed_r1"} {
		st := stepLike(t, demo, id)
		st.Workers = 2
		steps = append(steps, st)
	}
	sidecars := sweepOf(t, `{"paths": [{"name": "baseline", "sidecar": {"proxy": "none"}, "baseline": true}, {"name": "nginx", "sidecar": {"proxy": "nginx"}}], "protocol": "http1"}`,
		nil, steps...)
	size := sweepOf(t, `{"builtin": "size", "paths": [{"name": "baseline", "url": "nginx, worker_processes 2"}, {"name": "nginx", "url": "nginx, worker_processes 2"}], "protocol": "http1"}`,
		nil, steps...)
	ps, pz := htmlOf(t, []*Sweep{sidecars}), htmlOf(t, []*Sweep{size})
	golden(t, "reports/sizing-toc.html", []byte(fragments(ps, tocNav)+fragments(pz, tocNav)))
	if strings.Contains(ps, `id="sizing"`) || !strings.Contains(pz, `id="sizing"`) {
		t.Errorf("sizing table: sidecars %v, size %v", strings.Contains(ps, `id="sizing"`), strings.Contains(pz, `id="sizing"`))
	}
	var md strings.Builder
	if err := Markdown(&md, []*Sweep{sidecars}, Options{}); err != nil || strings.Contains(md.String(), "Ingress sizing") {
		t.Errorf("Markdown of sidecars has the sizing table (%v):\n%s", err, md.String())
	}
}

var (
	glanceNoteRE = regexp.MustCompile(`<p class="note glance-note">[^<]*</p>`)
	sweepNoteRE  = regexp.MustCompile(`<p class="note warn sweep-note">[^<]*</p>`)
)

// A sweep of several paths, none the baseline, warns in its page as the
// text table does, naming the fix, and the cards' caption does not speak
// of an "added" latency there is none of.
func TestHTMLNoBaseline(t *testing.T) {
	demo := fixtureSweep(t)[0]
	var steps []*results.Step
	for _, st := range demo.Steps {
		c := *st
		c.Baseline = false
		steps = append(steps, &c)
	}
	none := sweepOf(t, "", demo.Manifest.Steps, steps...)
	none.Manifest.Baseline = ""
	if none.Baseline() != "" {
		t.Fatalf("the fixture still has the baseline %q", none.Baseline())
	}
	page, with := htmlOf(t, []*Sweep{none}), htmlOf(t, fixtureSweep(t))
	got := fragments(page, glanceNoteRE, sweepNoteRE)
	golden(t, "reports/no-baseline.html", []byte(got))
	var text strings.Builder
	if err := SweepTable(&text, "", steps, TableOptions{Wide: true}); err != nil {
		t.Fatal(err)
	}
	note := noBaselineNote("", Cells(steps))
	if note == "" || !strings.Contains(strings.Join(strings.Fields(text.String()), " "), note) {
		t.Fatalf("the text table lacks the note %q:\n%s", note, text.String())
	}
	if !strings.Contains(html.UnescapeString(page), note) {
		t.Errorf("the page lacks the text report's note %q:\n%s", note, got)
	}
	if strings.Contains(got, "minus the baseline") {
		t.Errorf("the caption speaks of a baseline there is none of:\n%s", got)
	}
	if strings.Contains(with, "sweep-note") || !strings.Contains(fragments(with, glanceNoteRE), "minus the baseline") {
		t.Errorf("a sweep with its baseline:\n%s", fragments(with, glanceNoteRE, sweepNoteRE))
	}
}
