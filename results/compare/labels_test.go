package compare

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"loadgen/results"
)

func labelled(st *results.Step, l results.Labels) *results.Step {
	if st.Run != nil {
		st.Run.Labels = l
	}
	return st
}

// TestStepsMatchedByLabel checks that where runs of a side differ by a label
// (two meshes in one directory), steps match by it too; the labels a side's
// runs all share (its build) are what is compared, and the output says
// both.
func TestStepsMatchedByLabel(t *testing.T) {
	var a, b []*results.Step
	for _, rep := range []int{1, 2, 3} {
		a = append(a,
			labelled(step("nginx", "c1t1", 100, rep, 1000, 10), results.Labels{"mesh": "istio", "build": "1"}),
			labelled(step("nginx", "c1t1", 100, rep, 1000, 20), results.Labels{"mesh": "linkerd", "build": "1"}))
		b = append(b,
			labelled(step("nginx", "c1t1", 100, rep, 1000, 20), results.Labels{"mesh": "istio", "build": "2"}),
			labelled(step("nginx", "c1t1", 100, rep, 1000, 20), results.Labels{"mesh": "linkerd", "build": "2"}))
	}
	c := Steps(a, b, Options{})
	if want := "path, rung, payload, rate and label mesh"; c.MatchedBy != want {
		t.Errorf("MatchedBy %q, want %q", c.MatchedBy, want)
	}
	if got := Steps(a[:1], a[:1], Options{}).MatchedBy; got != "path, rung, payload and rate" {
		t.Errorf("unlabelled MatchedBy %q", got)
	}
	var reg []string
	for _, r := range c.Regressions() {
		reg = append(reg, r.Step+" "+r.Metric)
	}
	if !slices.Contains(reg, "nginx c1t1 100B mesh=istio p99") || slices.ContainsFunc(reg, func(s string) bool { return !strings.Contains(s, "mesh=istio") }) {
		t.Errorf("regressions %q, want istio's alone, its p99 among them", reg)
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, c); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"labels: A build=1; B build=2\n",
		"steps matched by path, rung, payload, rate and label mesh\n",
		"compared: build 1 → 2\n",
		"nginx c1t1 100B mesh=linkerd",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("no %q in:\n%s", want, buf.String())
		}
	}
}

// TestRunsSayTheirLabels checks that a comparison says two runs' labels, and
// what differs.
func TestRunsSayTheirLabels(t *testing.T) {
	a, b := runOf(1000, 10), runOf(1000, 10)
	a.Labels = results.Labels{"mesh": "istio", "build": "1"}
	b.Labels = results.Labels{"mesh": "istio", "build": "2", "node": "n2"}
	got := strings.Join(Runs(a, b, Options{}).LabelLines, "\n")
	want := "labels: A build=1, mesh=istio; B build=2, mesh=istio, node=n2\ncompared: build 1 → 2, node (none) → n2"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if l := Runs(runOf(1000, 10), runOf(1000, 10), Options{}).LabelLines; l != nil {
		t.Errorf("unlabelled runs: %q", l)
	}
}
