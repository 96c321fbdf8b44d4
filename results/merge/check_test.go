package merge

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"loadgen/results"
)

// A closed loop and an open loop are different loads, whatever the rate;
// open loops with different rates are shares of one.
func TestMergeRefusesMixedLoopModels(t *testing.T) {
	for name, change := range map[string]func(a, b *results.Config){
		"-R and closed":       func(a, b *results.Config) { b.Rate = 0 },
		"schedule and closed": func(a, b *results.Config) { a.Rate, a.Schedule, b.Rate = 0, "ramp:100-5000/30s", 0 },
	} {
		in, _, _ := workerRuns(t, 2, 5)
		change(&in[0].Run.Config, &in[1].Run.Config)
		_, _, err := Runs(in)
		if err == nil || !strings.Contains(err.Error(), "closed loop") || !strings.Contains(err.Error(), "open loop") ||
			!strings.Contains(err.Error(), in[1].Source) {
			t.Errorf("%s: %v, want a refusal naming %s, the closed loop and the open loop", name, err, in[1].Source)
		}
	}
	in, _, _ := workerRuns(t, 2, 5)
	in[1].Run.Config.Rate = 250 // another share of one open loop
	if _, _, err := Runs(in); err != nil {
		t.Errorf("open loops of different rates refused: %v", err)
	}
}

// Runs measured one after the other are not one load: the gap between
// them would count as measured time. A worker late still merges, even by
// most of a short window.
func TestMergeRefusesWindowsApart(t *testing.T) {
	shift := func(r *results.Run, d time.Duration) { r.Start, r.End = r.Start.Add(d), r.End.Add(d) }
	for _, tc := range []struct {
		name  string
		shift time.Duration
		msg   string
	}{
		{"one after the other", 17 * time.Second, "ended 7s before"},
		{"back to back", 10 * time.Second, "ended"},
	} {
		in, _, _ := workerRuns(t, 2, 6)
		shift(in[1].Run, tc.shift)
		_, _, err := Runs(in)
		if err == nil || !strings.Contains(err.Error(), "not measured at the same time") || !strings.Contains(err.Error(), tc.msg) ||
			!strings.Contains(err.Error(), in[0].Source) || !strings.Contains(err.Error(), in[1].Source) {
			t.Errorf("%s: %v, want a refusal saying they were not measured at the same time (%q)", tc.name, err, tc.msg)
		}
	}
	in, _, _ := workerRuns(t, 2, 6)
	shift(in[1].Run, 9*time.Second)
	if _, _, err := Runs(in); err != nil {
		t.Errorf("windows overlapping by 1 s of 10: %v", err)
	}
	in, _, _ = workerRuns(t, 3, 6)
	shift(in[2].Run, 2*time.Second) // --max-late's default
	got, _, err := Runs(in)
	if err != nil {
		t.Fatalf("a worker 2 s late in a 10 s run: %v", err)
	}
	if want := in[2].Run.End.Sub(in[0].Run.Start); got.Summary.Duration.D() != want {
		t.Errorf("duration %v, want the union %v", got.Summary.Duration, want)
	}
	in, _, _ = workerRuns(t, 2, 6)
	in[1].Run.Start, in[1].Run.End = time.Time{}, time.Time{}
	if _, _, err := Runs(in); err == nil || !strings.Contains(err.Error(), "no measured window") {
		t.Errorf("a run without times beside a timed one: %v", err)
	}
}

// The same run twice would count every request twice.
func TestMergeRefusesTheSameRunTwice(t *testing.T) {
	in, _, _ := workerRuns(t, 2, 8)
	copied := *in[0].Run
	_, _, err := Runs([]Input{in[0], in[1], {Source: "copy.json", Run: &copied}})
	if err == nil || !strings.Contains(err.Error(), "same run") || !strings.Contains(err.Error(), "copy.json") || !strings.Contains(err.Error(), in[0].Source) {
		t.Errorf("a copy of worker 0: %v", err)
	}
	// Another host that started at the same instant with the same counts
	// is another generator.
	copied.Env.Hostname = "worker-z"
	if _, _, err := Runs([]Input{in[0], in[1], {Source: "z.json", Run: &copied}}); err != nil {
		t.Errorf("another host's run refused: %v", err)
	}
}

// A sweep's step file merges as the run it holds; a failed step, a
// manifest and a bare loadgen header are refused.
func TestDecodeStepFiles(t *testing.T) {
	in, _, _ := workerRuns(t, 2, 10)
	var steps []Input
	for i, x := range in {
		b, err := json.Marshal(results.Step{Schema: results.SchemaVersion, Tool: "loadgen", ID: "p_c4t4_100B_closed_r1",
			Rung: "c4t4", Connections: 4, Threads: 2, Run: x.Run})
		if err != nil {
			t.Fatal(err)
		}
		st, err := Decode("step"+string(rune('0'+i))+".json", b)
		if err != nil {
			t.Fatal(err)
		}
		steps = append(steps, st)
	}
	got, _, err := Runs(steps)
	if err != nil {
		t.Fatal(err)
	}
	want, _, err := Runs(in)
	if err != nil {
		t.Fatal(err)
	}
	if got.Summary.Requests == 0 || got.Summary.Requests != want.Summary.Requests || got.Summary.Latency != want.Summary.Latency ||
		got.Histograms.Latency != want.Histograms.Latency || got.Config.Target != want.Config.Target {
		t.Errorf("steps merged to %d requests %+v, want the runs' merge: %d requests %+v",
			got.Summary.Requests, got.Summary.Latency, want.Summary.Requests, want.Summary.Latency)
	}
	for _, tc := range []struct{ name, doc, msg string }{
		{"failed step", `{"schema":2,"tool":"loadgen","rung":"c4t4","failed":"connect: connection refused\nmore"}`, "the step failed (connect: connection refused …)"},
		{"newer run in a step", `{"schema":2,"tool":"loadgen","rung":"c4t4","run":{"schema":9,"tool":"loadgen"}}`, "run: result schema 9 is newer"},
		{"manifest", `{"schema":2,"tool":"loadgen","kind":"sweep","steps":["a"]}`, "a sweep's manifest, not a run"},
		{"bare header", `{"schema":2,"tool":"loadgen"}`, "not a loadgen run"},
	} {
		if _, err := Decode("x.json", []byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.msg) || !strings.HasPrefix(err.Error(), "x.json") {
			t.Errorf("%s: %v, want an error about x.json saying %q", tc.name, err, tc.msg)
		}
	}
}
