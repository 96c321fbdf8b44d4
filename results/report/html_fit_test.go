package report

import (
	"regexp"
	"strings"
	"testing"

	"loadgen/results"
)

// At 1400 px, a sweep's step table shows its flags column without
// scrolling: every flags cell lies inside the table's box (check.js
// counts those that do not in data-flags-hidden).
func TestHTMLFlagsColumnVisible(t *testing.T) {
	path := writeHTML(t, fixtureSweep(t), nil)
	dom, log := browse(t, path, "--window-size=1400,1000", "--dump-dom")
	st := pageState(t, dom)
	if st["checked"] != "yes" {
		t.Fatalf("the page's check did not run: %v\n%s", st, log)
	}
	if st["flags-cells"] == "" || st["flags-cells"] == "0" {
		t.Fatalf("no flags column seen: %v", st)
	}
	if h := st["flags-hidden"]; h != "0" {
		t.Errorf("%s of %s flags cells are outside the table's box at 1400 px", h, st["flags-cells"])
	}
}

// The At a glance cards say when a path's steps were saturated (the
// machine's or loadgen's own CPUs): their figures measure contention.
func TestGlanceSaysSaturated(t *testing.T) {
	sweeps := fixtureSweep(t)
	n := 0
	for _, st := range sweeps[0].Steps {
		if st.Path == "nginx" && st.Run != nil && st.Rung != "c1t1" {
			st.Run.Machine = &results.MachineCost{CPUs: 2, BusyCores: 1.96, Utilization: 0.98, Saturated: true}
			n++
		}
	}
	if n == 0 {
		t.Fatal("no nginx step in the fixture")
	}
	cards := glance(sweeps[0], map[string]string{}, false)
	var text []string
	for _, c := range cards {
		for _, f := range c.Rows {
			text = append(text, c.Path+": "+f.Label+" "+f.Value+" "+f.Sub)
		}
	}
	all := strings.Join(text, "\n")
	if !strings.Contains(all, "nginx: saturated") || strings.Contains(all, "baseline: saturated") {
		t.Errorf("the cards do not say nginx's steps were saturated (and only its):\n%s", all)
	}
}

// Every figure of the HTML report has its unit: a CPU figure says cores,
// in its cell (a run's summary) or its column's head (a sweep's steps).
func TestHTMLFiguresHaveUnits(t *testing.T) {
	var b strings.Builder
	if err := HTML(&b, fixtureRun(t), Options{}); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`<td>[0-9.]+ cores</td>`).MatchString(b.String()) {
		t.Errorf("a run's gen cpu has no unit")
	}
	b.Reset()
	if err := HTML(&b, fixtureSweep(t), Options{}); err != nil {
		t.Fatal(err)
	}
	for _, head := range []string{"proxy cpu, cores", "target cpu, cores", "gen cpu, cores", "cpu/1k, cores"} {
		if !strings.Contains(b.String(), ">"+head+"<") {
			t.Errorf("no column head %q", head)
		}
	}
}

// A run merged from workers on machines of one name (by an older loadgen,
// which kept every worker's) says that name once.
func TestEnvLineNamesEachHostOnce(t *testing.T) {
	if got := envLine(results.Env{Hostname: "vm,vm,vm2,vm", NumCPU: 2}); got != "vm,vm2, 2 CPUs" {
		t.Errorf("envLine = %q", got)
	}
}
