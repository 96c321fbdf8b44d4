package compare

import (
	"fmt"
	"strings"
	"time"

	"loadgen/results"
)

// Live is how an assertion is judged while its run goes on, to stop a run
// that already broke it (--abort-on-fail).
type Live int

const (
	// AtEnd is judged only once the run is over — the generator's CPU (cpu)
	// and the watched processes' (cpu.NAME, mem.NAME), which are measured
	// over the whole run or step, and a count bounded from below
	// (errors>10), which a run may still reach.
	AtEnd Live = iota
	// OverWindow is judged over the run's last seconds (a sliding window) —
	// rps, the latencies, and errors and timeouts as a share (errors<1%).
	OverWindow
	// SoFar is judged over the run so far — a count of errors or timeouts
	// bounded from above (errors<10): it only grows, so once past its bound
	// the run has failed it.
	SoFar
)

// JudgedAtEnd names, in the flags' words, what is judged only at a run's
// end (AtEnd): for the help of --abort-on-fail and its refusal of
// assertions none of which can be judged while the load runs.
const JudgedAtEnd = "the generator's CPU (cpu), cpu.NAME, mem.NAME, a count bounded from below (errors>10) and a percentile the summary lacks (p99.5)"

// Live tells how the assertion is judged while its run goes on.
func (a Assertion) Live() Live {
	switch a.kind() {
	case kindLatency:
		if p, ok := percentOf(a.Metric); ok {
			if _, held := (results.Latency{}).At(p); !held {
				return AtEnd // from the run's histogram, which the window has not
			}
		}
		return OverWindow
	case kindRate:
		return OverWindow
	case kindCount:
		if a.Unit == "%" {
			return OverWindow
		}
		if a.Op == "<" || a.Op == "<=" {
			return SoFar
		}
	}
	return AtEnd
}

// Breach judges the assertions that apply while a run goes on: those
// judged OverWindow on recent, the run's last seconds (from, to: from the
// start of its measured window), those judged SoFar on soFar, the run up
// to to (its counts). It returns why the run must stop — the first
// assertion that does not hold — or "" when every one holds or cannot be
// judged yet (nothing was measured in the window), as
//
//	aborted at 3.0 s: p99<20ms broke (p99 45.1ms over 0.0–3.0 s)
func Breach(as []Assertion, recent, soFar *results.Run, from, to time.Duration) string {
	for _, a := range as {
		var r Result
		over := from
		switch a.Live() {
		case OverWindow:
			r = a.Eval(recent, nil)
		case SoFar:
			r, over = a.Eval(soFar, nil), 0
		default:
			continue
		}
		if r.Err != "" || r.Pass {
			continue
		}
		return fmt.Sprintf("aborted at %s: %s%s%s %s over %s–%s)", secs(to), r.Expr, brokeSep, r.Metric, r.MeasuredText,
			fmt.Sprintf("%.1f", over.Seconds()), secs(to))
	}
	return ""
}

// brokeSep comes between the assertion that broke and what it measured
// in Breach's reason.
const brokeSep = " broke ("

// markBreach marks, in an aborted run's results, the assertion that broke
// while it ran as failed, with what it measured then ("100% over 5.2–8.4
// s"): over the whole run, cut short, it may hold.
func markBreach(res []Result, aborted string) {
	_, rest, ok := strings.Cut(aborted, ": ")
	if !ok {
		return
	}
	for i, r := range res {
		what, found := strings.CutPrefix(rest, r.Expr+brokeSep+r.Metric+" ")
		if !found || r.Skipped != "" {
			continue
		}
		res[i].Pass, res[i].Err = false, ""
		res[i].MeasuredText = strings.TrimSuffix(what, ")")
		// The figure, in the assertion's unit: "45.1ms" of p99<20ms is 45.1.
		figure, _, _ := strings.Cut(what, " ")
		num, unit := splitValue(figure)
		if v, err := parseNumber(num); err == nil {
			_, bunit := splitValue(r.Bound)
			if from, ok := timeUnits[unit]; ok {
				if to, ok := timeUnits[bunit]; ok {
					v *= from / to
				}
			}
			res[i].Measured = v
		}
		return
	}
}

// secs writes a time into the run as "3.0 s".
func secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// Judged splits assertions into those judged while a run goes on and
// those judged at its end only.
func Judged(as []Assertion) (live, atEnd []Assertion) {
	for _, a := range as {
		if a.Live() == AtEnd {
			atEnd = append(atEnd, a)
		} else {
			live = append(live, a)
		}
	}
	return live, atEnd
}
