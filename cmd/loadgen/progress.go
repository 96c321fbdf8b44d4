package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"loadgen/loadgen/sweep"
	"loadgen/results/report"
)

// sweepProgress shows a sweep's progress: a line for each finished step,
// kept on screen as a user scrolling back expects, and on a terminal one
// bar for the whole sweep below them (a spinner for --find-max, whose
// number of probes is not known up front).
type sweepProgress struct {
	w     io.Writer
	quiet bool
	mu    sync.Mutex // events come from the sweep and from the engine's reporter
	bar   *progressbar.ProgressBar
}

// newSweepProgress shows the progress of total steps; total 0 is a
// --find-max search.
func newSweepProgress(w io.Writer, total int, quiet bool) *sweepProgress {
	p := &sweepProgress{w: w, quiet: quiet}
	if quiet || !isTerminal(w) {
		return p
	}
	opts := []progressbar.Option{progressbar.OptionSetWriter(w), progressbar.OptionSetWidth(30), progressbar.OptionClearOnFinish()}
	if total > 0 {
		p.bar = progressbar.NewOptions(total, append(opts, progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true))...)
	} else {
		p.bar = progressbar.NewOptions(-1, append(opts, progressbar.OptionSpinnerType(14))...)
	}
	return p
}

func (p *sweepProgress) event(e sweep.Event) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	label := e.Step.Label()
	if e.Searches > 0 {
		label += fmt.Sprintf(" at %.0f/s", e.Step.Rate)
		if e.Step.Repeat > 1 {
			label += fmt.Sprintf(" (again, #%d)", e.Step.Repeat)
		}
	}
	switch e.Kind {
	case sweep.StepStarted:
		p.describe(e, label)
	case sweep.StepLive:
		p.describe(e, fmt.Sprintf("%s  %.0f req/s", label, e.Live.RPS))
	case sweep.StepFinished, sweep.StepSkipped:
		line := stepLine(e, label)
		if p.bar == nil {
			fmt.Fprintln(p.w, line)
			return
		}
		// The bar's line becomes the step's; the bar is drawn again below.
		p.bar.Clear()
		fmt.Fprintf(p.w, "\r%s\n", line)
		p.bar.Add(1)
	}
}

func (p *sweepProgress) describe(e sweep.Event, s string) {
	if p.bar == nil {
		return
	}
	if e.Searches > 0 {
		s = fmt.Sprintf("probe %d, search %d/%d: %s", e.N+1, e.Search, e.Searches, s)
	}
	p.bar.Describe(s)
}

// stepLine is a finished step's line: "[3/16] nginx c4t4 100 B: 15079
// req/s, p50 224us, p99 983us, errors 0 (ETA 40s)"; a --find-max probe's
// is "probe 5, search 1/2: baseline c16t2 100 B at 1600/s: holds …".
func stepLine(e sweep.Event, label string) string {
	if e.Kind == sweep.StepSkipped {
		return fmt.Sprintf("[%d/%d] %s: already done", e.N+1, e.Total, label)
	}
	figures := report.StepFigures(e.Result)
	if e.Searches > 0 {
		verdict := "holds"
		if e.Probe != nil && !e.Probe.OK {
			verdict = "misses the SLO (" + e.Probe.Why + ")"
		}
		if e.Probe != nil {
			// G, M: the verdict may measure contention, not the path.
			for _, f := range e.Probe.Flags() {
				figures += fmt.Sprintf(" [%c %s]", f, report.FlagName(string(f)))
			}
		}
		return fmt.Sprintf("probe %d, search %d/%d: %s: %s: %s", e.N+1, e.Search, e.Searches, label, verdict, figures)
	}
	return fmt.Sprintf("[%d/%d] %s: %s (ETA %s)", e.N+1, e.Total, label, figures, e.ETA.Round(time.Second))
}

func (p *sweepProgress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.bar != nil {
		p.bar.Finish()
		p.bar.Clear() // a spinner never finishes by itself
	}
}
