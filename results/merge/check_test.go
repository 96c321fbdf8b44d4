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
// them would count as measured time. Even a skew allowed does not merge
// them.
func TestMergeRefusesWindowsApart(t *testing.T) {
	for _, tc := range []struct {
		name  string
		shift time.Duration
		msg   string
	}{
		{"one after the other", 17 * time.Second, "ended 7.003s before"},
		{"back to back", 10 * time.Second, "ended"},
	} {
		for _, allow := range []bool{false, true} {
			in, _, _ := workerRuns(t, 2, 6)
			shift(in[1].Run, tc.shift)
			_, _, err := RunsWith(in, Options{AllowSkew: allow})
			if err == nil || !strings.Contains(err.Error(), "not measured at the same time") || !strings.Contains(err.Error(), tc.msg) ||
				!strings.Contains(err.Error(), in[0].Source) || !strings.Contains(err.Error(), in[1].Source) {
				t.Errorf("%s (allow skew %v): %v, want a refusal saying they were not measured at the same time (%q)", tc.name, allow, err, tc.msg)
			}
		}
	}
	in, _, _ := workerRuns(t, 2, 6)
	in[1].Run.Start, in[1].Run.End = time.Time{}, time.Time{}
	if _, _, err := Runs(in); err == nil || !strings.Contains(err.Error(), "no measured window") {
		t.Errorf("a run without times beside a timed one: %v", err)
	}
}

func shift(r *results.Run, d time.Duration) { r.Start, r.End = r.Start.Add(d), r.End.Add(d) }

// twoRuns are two generators' runs of one 10 s load, the second started
// late, each with its own requests at its own rate: a at 1000/s, b at
// 3000/s.
func twoRuns(t *testing.T, late time.Duration) []Input {
	in, _, _ := workerRuns(t, 2, 11)
	base := in[0].Run.Start
	for i, x := range in {
		r := x.Run
		r.Start = base
		r.End = base.Add(10 * time.Second)
		r.Summary.Requests = int64(10000 * (2*i + 1))
		r.Summary.BytesRead = 100 * r.Summary.Requests
		r.Summary.Pacing = nil
		r.Summary.Duration = results.Duration(10 * time.Second)
		r.Summary.RPS = float64(r.Summary.Requests) / 10
	}
	shift(in[1].Run, late)
	return in
}

// Two runs of one load measured at different times overlap by a few ms:
// refused, with a message that says by how much and how to merge them
// anyway. Allowed, their rate is the sum of their own rates (not their
// requests over the union of their windows: half as much), and the notes
// say the windows were skewed and by how much.
func TestMergeSkewedWindows(t *testing.T) {
	in := twoRuns(t, 10*time.Second-5*time.Millisecond)
	_, _, err := Runs(in)
	if err == nil {
		t.Fatal("runs overlapping by 5 ms of 10 s merged")
	}
	for _, m := range []string{in[0].Source, in[1].Source, "overlap too little", "5ms of the shortest window's 10s (0.0%)", "starts 9.995s apart", "90%", "--allow-skew"} {
		if !strings.Contains(err.Error(), m) {
			t.Errorf("%v does not say %q", err, m)
		}
	}
	got, workers, err := RunsWith(in, Options{AllowSkew: true})
	if err != nil {
		t.Fatal(err)
	}
	s := got.Summary
	if !near(s.RPS, 4000) || !near(s.ReadPerSec, 400000) || s.Requests != 40000 {
		t.Errorf("%d requests at %v/s (%v B/s read), want 40000 at 4000/s, the sum of 1000/s and 3000/s", s.Requests, s.RPS, s.ReadPerSec)
	}
	if s.Duration.D() != 10*time.Second || got.End.Sub(got.Start) != 20*time.Second-5*time.Millisecond {
		t.Errorf("duration %v over %v: want each run's 10 s, within the union of their windows", s.Duration, got.End.Sub(got.Start))
	}
	if workers[0].RPS != 1000 || workers[1].RPS != 3000 {
		t.Errorf("workers' rates %v and %v, want their own: 1000 and 3000", workers[0].RPS, workers[1].RPS)
	}
	notes := strings.Join(got.Notes, "\n")
	for _, m := range []string{"skewed", "5ms of the shortest window's 10s (0.0%)", "starts 9.995s apart"} {
		if !strings.Contains(notes, m) {
			t.Errorf("notes %q do not say %q", notes, m)
		}
	}
}

// The limit: every run must have measured 90% of the shortest window
// together. A worker 1 s late in a 10 s run merges; 2 s late (the
// Kubernetes coordinator's --max-late), only with the skew allowed, at the
// sum of the rates.
func TestMergeOverlapLimit(t *testing.T) {
	for _, tc := range []struct {
		late time.Duration
		ok   bool
	}{
		{0, true},
		{time.Millisecond, true},
		{time.Second, true}, // 90.0%
		{time.Second + time.Microsecond, false},
		{2 * time.Second, false},
		{-2 * time.Second, false}, // the other one late
	} {
		in := twoRuns(t, tc.late)
		got, _, err := Runs(in)
		if tc.ok != (err == nil) {
			t.Errorf("%v late: %v, want merged %v", tc.late, err, tc.ok)
		}
		if err == nil && (!near(got.Summary.RPS, 4000) || strings.Contains(strings.Join(got.Notes, " "), "skewed")) {
			t.Errorf("%v late: %v/s, notes %q: want 4000/s, not skewed", tc.late, got.Summary.RPS, got.Notes)
		}
		if tc.ok {
			continue
		}
		got, _, err = RunsWith(in, Options{AllowSkew: true})
		if err != nil || !near(got.Summary.RPS, 4000) || !strings.Contains(strings.Join(got.Notes, " "), "skewed") {
			t.Errorf("%v late, skew allowed: %v (%+v), want 4000/s and a note", tc.late, err, got)
		}
	}
	// The shorter window counts: a run cut short (interrupted) at 9.5 s,
	// within the other's 10 s, was measured at the same time for all of it.
	in := twoRuns(t, 0)
	in[1].Run.End = in[1].Run.End.Add(-500 * time.Millisecond)
	if _, _, err := Runs(in); err != nil {
		t.Errorf("a window within the other: %v", err)
	}
}

// Runs measured over the same window merge as before the rates were
// summed: their requests over that window, and their generators' CPU over
// their cores for that window.
func TestMergeSameWindow(t *testing.T) {
	in := twoRuns(t, 0)
	in[0].Run.Generator = results.Cost{CPUSeconds: 4, CPUs: 2}
	in[1].Run.Generator = results.Cost{CPUSeconds: 8, CPUs: 2}
	got, _, err := Runs(in)
	if err != nil {
		t.Fatal(err)
	}
	s := got.Summary
	if s.RPS != float64(s.Requests)/10 || s.Duration.D() != 10*time.Second || !got.Start.Equal(in[0].Run.Start) || !got.End.Equal(in[0].Run.End) {
		t.Errorf("%v/s over %v from %v to %v, want %v/s over 10 s, the runs' window", s.RPS, s.Duration, got.Start, got.End, float64(s.Requests)/10)
	}
	if g := got.Generator; g.CPUSeconds != 12 || g.CPUs != 4 || !near(g.Utilization, 0.3) {
		t.Errorf("generator %+v: want 12 CPU-s on 4 cores over 10 s: 30%%", g)
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
		{"failed step", `{"schema":2,"tool":"loadgen","rung":"c4t4","failed":"connect: connection refused\nmore"}`, "the step failed (connect: connection refused more): it has no run"},
		{"newer run in a step", `{"schema":2,"tool":"loadgen","rung":"c4t4","run":{"schema":9,"tool":"loadgen"}}`, "run: result schema 9 is newer"},
		{"manifest", `{"schema":2,"tool":"loadgen","kind":"sweep","steps":["a"]}`, "a sweep's manifest, not a run"},
		{"bare header", `{"schema":2,"tool":"loadgen"}`, "not a loadgen run"},
	} {
		if _, err := Decode("x.json", []byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.msg) || !strings.HasPrefix(err.Error(), "x.json") {
			t.Errorf("%s: %v, want an error about x.json saying %q", tc.name, err, tc.msg)
		}
	}
}
