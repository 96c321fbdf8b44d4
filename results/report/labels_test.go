package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"loadgen/results"
)

// labelSweep is the fixture sweep, its runs labelled: every one
// mesh=istio, and build=1 or 2 by path; one step failed, with no run.
func labelSweep(t *testing.T) []*Sweep {
	s := fixtureSweep(t)
	for _, st := range s[0].Steps {
		build := "1"
		if st.Path == "nginx" {
			build = "2"
		}
		st.Run.Labels = results.Labels{"mesh": "istio", "build": build}
	}
	s[0].Steps[0].Run, s[0].Steps[0].Failed = nil, "no answer"
	return s
}

// TestCSVLabelColumns checks the CSV's label columns: a column per label
// key, label.KEY, last; each row its run's value, a failed step its sweep's
// common ones.
func TestCSVLabelColumns(t *testing.T) {
	rows, err := csv.NewReader(bytes.NewReader(render(t, func(b *bytes.Buffer) error { return CSV(b, labelSweep(t)) }))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := rows[0]
	if n := len(head); n < 2 || head[n-2] != "label.build" || head[n-1] != "label.mesh" {
		t.Fatalf("last columns %q, want label.build, label.mesh", head[max(0, len(head)-3):])
	}
	path := -1
	for i, h := range head {
		if h == "path" {
			path = i
		}
	}
	for i, r := range rows[1:] {
		build, mesh := r[len(r)-2], r[len(r)-1]
		want := "1"
		if r[path] == "nginx" {
			want = "2"
		}
		if i == 0 {
			want = "" // the failed step: not every run had its build
		}
		if mesh != "istio" || build != want {
			t.Errorf("row %d (%s): build %q mesh %q, want %q istio", i+1, r[path], build, mesh, want)
		}
	}
}

// TestReportsSayTheLabels checks that Markdown's and HTML's lead lines name
// the labels every run carries.
func TestReportsSayTheLabels(t *testing.T) {
	md := string(render(t, func(b *bytes.Buffer) error { return Markdown(b, labelSweep(t), Options{}) }))
	if !strings.Contains(md, " · labels mesh=istio\n") || strings.Contains(md, "build=") {
		t.Errorf("Markdown does not say the sweep's labels alone:\n%s", md[:min(len(md), 600)])
	}
	run := fixtureRun(t)
	run[0].Steps[0].Run.Labels = results.Labels{"mesh": "istio", "build": "42"}
	md = string(render(t, func(b *bytes.Buffer) error { return Markdown(b, run, Options{}) }))
	if !strings.Contains(md, " · labels build=42, mesh=istio\n") {
		t.Errorf("Markdown does not say the run's labels:\n%s", md[:min(len(md), 600)])
	}
	html := string(render(t, func(b *bytes.Buffer) error { return HTML(b, run, Options{}) }))
	if !strings.Contains(html, "labels build=42, mesh=istio</p>") {
		t.Errorf("HTML does not say the run's labels")
	}
}

// TestWrkSaysTheLabels checks that run's summary names the run's labels in
// its own section, after wrk's (whose lines scripts parse).
func TestWrkSaysTheLabels(t *testing.T) {
	run := fixtureRun(t)[0].Steps[0].Run
	run.Labels = results.Labels{"mesh": "istio", "build": "42"}
	out := string(render(t, func(b *bytes.Buffer) error { return WrkBody(b, run, WrkOptions{}) }))
	if !strings.Contains(out, "--- loadgen ---\n  Labels:                build=42, mesh=istio\n") {
		t.Errorf("no labels line:\n%s", out)
	}
}

// labelRun is the fixture run, labelled mesh=istio and run=3.
func labelRun(t *testing.T) []*Sweep {
	s := fixtureRun(t)
	run := *s[0].Steps[0].Run
	run.Labels = results.Labels{"mesh": "istio", "run": "3"}
	s[0].Steps[0].Run = &run
	return s
}

// TestFortioAndSMPCarryLabels checks that the user's --label pairs reach
// fortio's Labels as its -labels flag gives them (the user's text alone, the
// step after " , " in a sweep) and SMP's labels map beside loadgen.* keys.
func TestFortioAndSMPCarryLabels(t *testing.T) {
	run := labelRun(t)
	fortio := render(t, func(b *bytes.Buffer) error { return Fortio(b, run) })
	smp := render(t, func(b *bytes.Buffer) error { return SMP(b, run) })
	golden(t, "labels.fortio.json", fortio)
	golden(t, "labels.smp.json", smp)
	var f struct{ Labels string }
	var m struct{ Labels map[string]string }
	if err := json.Unmarshal(fortio, &f); err != nil || f.Labels != "mesh=istio,run=3" {
		t.Errorf("fortio Labels %q (%v), want mesh=istio,run=3", f.Labels, err)
	}
	if err := json.Unmarshal(smp, &m); err != nil || m.Labels["mesh"] != "istio" || m.Labels["run"] != "3" || m.Labels["loadgen.path"] == "" {
		t.Errorf("SMP labels %v (%v)", m.Labels, err)
	}
	var steps []struct{ Labels string }
	if err := json.Unmarshal(render(t, func(b *bytes.Buffer) error { return Fortio(b, labelSweep(t)) }), &steps); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"build=1,mesh=istio , baseline c4t4 100 B", "build=2,mesh=istio , nginx c64t64 1 KiB"} {
		if !slices.ContainsFunc(steps, func(s struct{ Labels string }) bool { return s.Labels == want }) {
			t.Errorf("no step labelled %q in the sweep's fortio JSON", want)
		}
	}
}
