package sweep

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"loadgen/results"
	"loadgen/results/report"
)

// Each search's bracket: the highest rate that held (confirmed), the
// lowest that missed, the probes each rests on, the G and M flags; why the
// failing end failed, the machine's state and which probes measured
// contention are notes.
func TestBracket(t *testing.T) {
	long := "p99 812.4ms is not < 10ms because the machine was busy doing something else for a very long while"
	maxes := []Max{
		{Path: "baseline", Rung: "c16t2", Payload: 100, Rate: 3100, P99: Micros(1200 * time.Microsecond),
			Pass:   &Verdict{Rate: 3100, OK: true, Probes: 3, Passed: 2, Judged: 1},
			Fail:   &Verdict{Rate: 3200, Probes: 2, Why: long, Judged: 2},
			Probes: make([]Probe, 14),
			Machine: &MachineState{CPUs: 2, Measured: 14, UtilizationMin: 0.35, UtilizationMedian: 0.6, UtilizationMax: 0.98,
				MachineSaturated: 2, GeneratorSaturated: 1},
			Contended:          []Contended{{ID: "x", Rate: 3100, Attempt: 2, Flags: "M"}, {ID: "y", Rate: 6400, Attempt: 1, Flags: "GM"}},
			MeasuresContention: true},
		{Path: "nginx", Rung: "c16t2", Payload: 100, Failed: "cannot connect to http://127.0.0.1:1:\nconnection refused", Probes: make([]Probe, 1)},
		{Path: "fast", Rung: "c16t2", Payload: 100, Rate: 2e6, P99: Micros(900 * time.Microsecond),
			Pass:    &Verdict{Rate: 2e6, OK: true, Probes: 2, Passed: 2, Judged: 1},
			Probes:  make([]Probe, 15),
			Machine: &MachineState{CPUs: 2, Measured: 15, UtilizationMin: 0.3, UtilizationMedian: 0.31, UtilizationMax: 0.33}},
	}
	fm := Bracket(maxes, false, results.SchemaVersion)
	want := []report.FindMaxRow{
		{Payload: "100B", Step: "c16t2", Path: "baseline", Max: "3100", P99: "1.20ms", Held: "2/3", LowestFailing: "3200", Missed: "2/2", Probes: "14", Flags: "GM"},
		{Payload: "100B", Step: "c16t2", Path: "nginx", Max: "failed", P99: "—", Held: "—", LowestFailing: "—", Missed: "—", Probes: "1"},
		{Payload: "100B", Step: "c16t2", Path: "fast", Max: "2000000", P99: "900us", Held: "2/2", LowestFailing: "—", Missed: "—", Probes: "15"},
	}
	if !slices.Equal(fm.Rows, want) {
		t.Errorf("rows\n%+v\nwant\n%+v", fm.Rows, want)
	}
	notes := strings.Join(fm.Notes, "\n")
	for _, want := range []string{
		"baseline c16t2 100B at 3200/s: " + long + " (judged 2 times",
		"nginx c16t2 100B: failed: cannot connect to http://127.0.0.1:1: connection refused",
		"fast c16t2 100B: held up to the search's ceiling",
		"baseline c16t2 100B: the machine during the search: 2 CPUs, 35–98% busy (median 60%) over 14 probes (every process, /proc/stat)",
		"baseline c16t2 100B: MEASURES CONTENTION, not the path alone: the machine's CPUs (M) were saturated during 2 of the 14 probes, loadgen's own (G) during 1: " +
			"3100/s #2 (M, at the max), 6400/s #1 (GM); their verdicts may measure contention",
		"fast c16t2 100B: the machine during the search: 2 CPUs, 30–33% busy (median 31%) over 15 probes",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("no note %q in\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "fast c16t2 100B: MEASURES") {
		t.Errorf("a quiet search said it measures contention:\n%s", notes)
	}

	// Interrupted: a rate that held and no miss yet.
	if fm := Bracket(maxes[2:], true, results.SchemaVersion); !strings.Contains(strings.Join(fm.Notes, "\n"), "interrupted with 2000000/s held") {
		t.Errorf("an interrupted search: %q", fm.Notes)
	}
	// Interrupted before the rate that held once was confirmed: none is
	// reported.
	unconfirmed := Max{Path: "fast", Rung: "c1t1", Payload: 100, Pass: &Verdict{Rate: 800, OK: true, Probes: 1, Passed: 1, Judged: 1},
		Fail: &Verdict{Rate: 1600, Probes: 2, Why: "p99", Judged: 1}, Probes: make([]Probe, 6)}
	fm = Bracket([]Max{unconfirmed}, true, results.SchemaVersion)
	if r := fm.Rows[0]; r.Max != "none" || r.Held != "1/1" || r.LowestFailing != "1600" ||
		!slices.Contains(fm.Notes, "fast c1t1 100B: 800/s held in 1 of 1 probes and was not confirmed (2 must hold) before the search was interrupted; --resume continues it") {
		t.Errorf("an unconfirmed rate: %+v %q", fm.Rows, fm.Notes)
	}
	// An older findmax.json's rate that held once of three is shown as it
	// was found, with a note.
	old := Max{Path: "old", Rung: "c1t1", Payload: 100, Rate: 1850, Pass: &Verdict{Rate: 1850, OK: true, Probes: 3, Passed: 1}, Probes: make([]Probe, 9)}
	fm = Bracket([]Max{old}, false, 2)
	if fm.Rows[0].Max != "1850" || !strings.Contains(strings.Join(fm.Notes, "\n"), "old c1t1 100B: 1850/s held in 1 of 3 probes: an older loadgen reported it") {
		t.Errorf("an older search: %+v %q", fm.Rows, fm.Notes)
	}
	// The same search in this schema: not confirmed, not reported.
	if fm = Bracket([]Max{{Path: "old", Rung: "c1t1", Payload: 100, Pass: old.Pass}}, false, results.SchemaVersion); fm.Rows[0].Max != "none" {
		t.Errorf("an unconfirmed rate in schema %d: %+v", results.SchemaVersion, fm.Rows)
	}
}

// TestFailedSearches: the searches with no run at all are named in one
// error; a search that ran, whatever it found, is not.
func TestFailedSearches(t *testing.T) {
	ran := Max{Path: "baseline", Rung: "c16t2", Payload: 100, Rate: 3100}
	none := Max{Path: "fast", Rung: "c1t1", Payload: 1024} // ran, nothing held
	down := Max{Path: "nginx", Rung: "c16t2", Payload: 100, Failed: "cannot connect"}
	gone := Max{Path: "envoy", Rung: "c4t4", Payload: 1024, Failed: "the proxy died"}
	for _, tc := range []struct {
		maxes []Max
		want  string
	}{
		{nil, "<nil>"},
		{[]Max{ran, none}, "<nil>"},
		{[]Max{ran, down}, "find-max: no run on nginx c16t2 100B (see the notes above)"},
		{[]Max{down, ran, gone}, "find-max: no run on nginx c16t2 100B, envoy c4t4 1KiB (see the notes above)"},
	} {
		if got := fmt.Sprint(FailedSearches(tc.maxes)); got != tc.want {
			t.Errorf("FailedSearches(%d searches) = %q, want %q", len(tc.maxes), got, tc.want)
		}
	}
}
