package merge

import (
	"fmt"
	"math"
	"time"

	"loadgen/results"
)

// MinOverlap is how much of the shortest measured window every run must
// have measured together (the span from the latest start to the earliest
// end) for their merge to be one load: 90%. Each run's rate is its own
// requests over its own window, and the merge adds those rates up; runs
// that measured mostly at different times would add up rates that never
// were at the same time, and their latencies would mix a load with less
// of it. Options.AllowSkew merges them anyway, saying so.
const MinOverlap = 0.9

// Options change what Runs accepts.
type Options struct {
	// AllowSkew merges runs whose measured windows overlap by less than
	// MinOverlap of the shortest one: the merged run's notes say that the
	// windows were skewed, and by how much. Runs that do not overlap at
	// all are refused even so: they are separate loads.
	AllowSkew bool
}

// skewNote begins the merged run's note, and Merged's warning, that says
// how skewed the runs' measured windows were, when Options.AllowSkew
// merged them.
const skewNote = "the measured windows were skewed"

// hasWindow tells whether a run records its measured window.
func hasWindow(r *results.Run) bool { return !r.Start.IsZero() && r.End.After(r.Start) }

// ownWindow is the time a run measured: its window, or, for a run that
// records none (a hand-made file), its summary's duration.
func ownWindow(r *results.Run) time.Duration {
	if hasWindow(r) {
		return r.End.Sub(r.Start)
	}
	return max(0, r.Summary.Duration.D())
}

// skew is how the runs' measured windows lie against each other.
type skew struct {
	common   time.Duration // measured by every run: the earliest end minus the latest start
	shortest time.Duration // the shortest window
	starts   time.Duration // from the earliest start to the latest
	ends     time.Duration // from the earliest end to the latest
	early    *Input        // the run that ended first
	late     *Input        // the run that started last
}

// share is the part of the shortest window that every run measured.
func (k skew) share() float64 {
	if k.shortest <= 0 {
		return 0
	}
	return float64(k.common) / float64(k.shortest)
}

// String says how skewed the windows are, for notes and messages.
func (k skew) String() string {
	return fmt.Sprintf("measured together for %v of the shortest window's %v (%s), starts %v apart, ends %v apart",
		round(k.common), round(k.shortest), percent(k.share()), round(k.starts), round(k.ends))
}

// percent prints a share as a percentage that never rounds up to the
// limit it missed (89.96% is not 90.0%).
func percent(x float64) string {
	return fmt.Sprintf("%.1f%%", math.Floor(1000*x)/10)
}

// windows measures the skew of timed runs (every run has a window).
func windows(in []Input) skew {
	k := skew{early: &in[0], late: &in[0], shortest: ownWindow(in[0].Run)}
	first, last := in[0].Run.Start, in[0].Run.End
	for i := range in {
		r := in[i].Run
		if r.Start.After(k.late.Run.Start) {
			k.late = &in[i]
		}
		if r.End.Before(k.early.Run.End) {
			k.early = &in[i]
		}
		if r.Start.Before(first) {
			first = r.Start
		}
		if r.End.After(last) {
			last = r.End
		}
		k.shortest = min(k.shortest, ownWindow(r))
	}
	k.common = k.early.Run.End.Sub(k.late.Run.Start)
	k.starts = k.late.Run.Start.Sub(first)
	k.ends = last.Sub(k.early.Run.End)
	return k
}

// sameTime refuses runs that were not measured at the same time: every
// run must have measured at least MinOverlap of the shortest window
// together with every other, or, with Options.AllowSkew, some instant
// at least; the skew so allowed is returned, for the notes (empty when the
// windows agree). Runs that do not overlap at all are separate loads.
// Runs that record no window (hand-made files) are merged as before, but
// not with runs that do.
func sameTime(in []Input, o Options) (string, error) {
	var timed, untimed *Input
	for i := range in {
		switch {
		case hasWindow(in[i].Run) && timed == nil:
			timed = &in[i]
		case !hasWindow(in[i].Run) && untimed == nil:
			untimed = &in[i]
		}
	}
	if timed == nil {
		return "", nil
	}
	if untimed != nil {
		return "", fmt.Errorf("%s records no measured window (start and end) but %s does: its requests cannot be placed in time; merge runs written by loadgen run --json",
			untimed.Source, timed.Source)
	}
	k := windows(in)
	if k.common <= 0 {
		return "", fmt.Errorf("%s and %s were not measured at the same time: %s ended %v before %s started; merge only the generators of one load, run together (or check their clocks)",
			k.early.Source, k.late.Source, k.early.Source, round(-k.common), k.late.Source)
	}
	if k.share() >= MinOverlap {
		return "", nil
	}
	if !o.AllowSkew {
		return "", fmt.Errorf("%s and %s overlap too little to be one load: %s; merge asks %.0f%% of the shortest window measured by every run, or it adds up rates of different times: "+
			"start the generators together (or check their clocks), or merge with --allow-skew to add their own rates anyway",
			k.early.Source, k.late.Source, k, 100*MinOverlap)
	}
	return skewNote + " (merged, skew allowed): " + k.String() +
		"; RPS is the sum of each run's own rate, but latency mixes times when not every generator was sending", nil
}

// round shortens a duration for messages.
func round(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Microsecond)
}

// distinct refuses the same run given twice: it would count every request
// twice. Two inputs are the same run when they started at the same instant
// on the same host with the same counts and latency histogram; the workers
// of one load differ at least by their host (pod) or start.
func distinct(in []Input) error {
	for i := range in {
		for j := range i {
			if sameRun(in[j].Run, in[i].Run) {
				return fmt.Errorf("%s and %s are the same run (same start, host and counts): each generator's run counts once; give it once",
					in[j].Source, in[i].Source)
			}
		}
	}
	return nil
}

func sameRun(a, b *results.Run) bool {
	return a.Start.Equal(b.Start) && a.End.Equal(b.End) && a.Env.Hostname == b.Env.Hostname &&
		a.Summary.Requests == b.Summary.Requests && a.Summary.BytesRead == b.Summary.BytesRead &&
		a.Summary.BytesWritten == b.Summary.BytesWritten && a.Summary.Errors == b.Summary.Errors &&
		a.Histograms.Latency == b.Histograms.Latency
}
