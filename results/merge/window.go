package merge

import (
	"fmt"
	"time"

	"loadgen/results"
)

// hasWindow tells whether a run records its measured window.
func hasWindow(r *results.Run) bool { return !r.Start.IsZero() && r.End.After(r.Start) }

// sameTime refuses runs that were not measured at the same time: some
// instant must be in every run's window. The generators of one load start
// at one agreed instant, a Kubernetes worker up to --max-late behind (which
// can be longer than a short step), so no more is asked; runs that do not
// overlap at all are separate loads, and the time between them would count
// as measured time. Runs that record no window (hand-made files) are
// merged as before, but not with runs that do.
func sameTime(in []Input) error {
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
		return nil
	}
	if untimed != nil {
		return fmt.Errorf("%s records no measured window (start and end) but %s does: its requests cannot be placed in time; merge runs written by loadgen run --json",
			untimed.Source, timed.Source)
	}
	late, early := &in[0], &in[0]
	for i := range in {
		r := in[i].Run
		if r.Start.After(late.Run.Start) {
			late = &in[i]
		}
		if r.End.Before(early.Run.End) {
			early = &in[i]
		}
	}
	if gap := late.Run.Start.Sub(early.Run.End); gap >= 0 {
		return fmt.Errorf("%s and %s were not measured at the same time: %s ended %v before %s started; merge only the generators of one load, run together (or check their clocks)",
			early.Source, late.Source, early.Source, round(gap), late.Source)
	}
	return nil
}

// round shortens a duration for messages.
func round(d time.Duration) time.Duration {
	if d >= time.Second {
		return d.Round(10 * time.Millisecond)
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
