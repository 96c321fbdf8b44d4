package compare

import (
	"fmt"
	"sort"
	"strings"

	"loadgen/results"
)

// Result is an assertion judged against one run.
type Result struct {
	Expr         string  `json:"expr"`          // the assertion, canonical
	Metric       string  `json:"metric"`        // p99, cpu.nginx …
	Op           string  `json:"op"`            // < <= > >=
	Measured     float64 `json:"measured"`      // in the assertion's unit (ms for p99<20ms)
	MeasuredText string  `json:"measured_text"` // for people: "23.4ms"
	Bound        string  `json:"bound"`         // as written: "20ms"
	Pass         bool    `json:"pass"`
	Err          string  `json:"error,omitempty"`   // why it could not be judged; never passes
	Skipped      string  `json:"skipped,omitempty"` // set by callers: why it does not apply here
}

// Message says what was found: "p99 12.3ms < 20ms", "p99 23.4ms is not <
// 20ms", or why it could not be judged.
func (r Result) Message() string {
	switch {
	case r.Skipped != "":
		return r.Metric + ": skipped: " + r.Skipped
	case r.Err != "":
		return r.Metric + ": " + r.Err
	case r.Pass:
		return fmt.Sprintf("%s %s %s %s", r.Metric, r.MeasuredText, r.Op, r.Bound)
	}
	return fmt.Sprintf("%s %s is not %s %s", r.Metric, r.MeasuredText, r.Op, r.Bound)
}

// Eval judges the assertion against a run and, for cpu.NAME and mem.NAME,
// the processes watched during it (a sweep step's Watched). A nil run (a
// failed step) or a figure the run lacks gives a Result with Err set.
func (a Assertion) Eval(run *results.Run, watched []results.ProcessCost) Result {
	r := Result{Expr: a.String(), Metric: a.Metric, Op: a.Op, Bound: a.bound()}
	if run == nil {
		r.Err = "no run to judge"
		return r
	}
	v, text, err := a.measure(run, watched)
	if err != "" {
		r.Err = err
		return r
	}
	r.Measured, r.Pass = v, a.holds(v)
	r.MeasuredText = text
	if text == r.Bound || strings.TrimSuffix(text, " cores") == r.Bound {
		// "20ms is not < 20ms" reads wrong: show the figure exactly.
		r.MeasuredText = exact(v) + a.Unit
	}
	return r
}

// measure returns the run's figure in the assertion's unit, and for people.
func (a Assertion) measure(run *results.Run, watched []results.ProcessCost) (float64, string, string) {
	s := &run.Summary
	switch k := a.kind(); k {
	case kindRate: // what was answered without error: failing fast is not throughput
		v := s.OKPerSec()
		return v, number(v), ""
	case kindLatency:
		switch {
		case s.Attempts() == 0 && s.Latency.Count == 0:
			return 0, "", "no responses, so no latency was measured"
		case s.OK() <= 0:
			// The latencies of failures are no figure to bound: a target
			// answering 404 fast must not pass p99<10ms.
			return 0, "", "no successful request (" + s.Failures() + ")"
		}
		d, err := latency(s.Latency, run.Histograms.Latency, a.Metric)
		if err != nil {
			return 0, "", err.Error()
		}
		ns := float64(d)
		return ns / timeUnits[a.Unit], duration(ns), ""
	case kindCount:
		failed := s.Errors.Total()
		if a.Metric == "timeouts" {
			failed = s.Errors.Timeout
		}
		if a.Unit != "%" {
			return float64(failed), fmt.Sprint(failed), ""
		}
		// Requests counts responses, including error statuses; the other
		// error classes are requests that got none.
		sent := s.Requests + s.Errors.Total() - s.Errors.Status
		if sent <= 0 {
			return 0, "", "no requests were sent"
		}
		pct := 100 * float64(failed) / float64(sent)
		return pct, percent(pct), ""
	case kindCPU:
		g := run.Generator
		if g.CPUs <= 0 {
			return 0, "", "the run did not record the generator's CPU"
		}
		if a.Unit == "%" {
			return 100 * g.Utilization, percent(100 * g.Utilization), ""
		}
		cores := g.Utilization * g.CPUs
		return cores, number(cores) + " cores", ""
	case kindProcCPU, kindProcMem:
		name := a.Metric[len("cpu."):]
		w, err := findWatched(watched, name)
		if err != "" {
			return 0, "", err
		}
		if k == kindProcCPU {
			return w.CPUMean, number(w.CPUMean) + " cores", ""
		}
		return float64(w.MemMax) / byteUnits[a.Unit], byteSize(float64(w.MemMax)), ""
	}
	return 0, "", "unknown metric"
}

// latency is a latency metric of l: max, mean, or a percentile, from the
// summary or the histogram enc (results.Percentile).
func latency(l results.Latency, enc, metric string) (results.Duration, error) {
	switch metric {
	case "max":
		return l.Max, nil
	case "mean":
		return l.Mean, nil
	}
	p, ok := percentOf(metric)
	if !ok {
		return 0, fmt.Errorf("unknown metric %s", metric)
	}
	return results.Percentile(l, enc, p)
}

func findWatched(watched []results.ProcessCost, name string) (results.ProcessCost, string) {
	var names []string
	for _, w := range watched {
		if w.Name == name {
			if w.NoProxy != "" {
				return w, fmt.Sprintf("watched process %q: no proxy on that side (%s)", name, w.NoProxy)
			}
			if w.Unmeasured != "" {
				return w, fmt.Sprintf("watched process %q: %s", name, w.Unmeasured)
			}
			if w.Samples == 0 {
				return w, fmt.Sprintf("watched process %q has no samples", name)
			}
			return w, ""
		}
		names = append(names, w.Name)
	}
	if len(names) == 0 {
		return results.ProcessCost{}, fmt.Sprintf("no process %q was watched: cpu.NAME and mem.NAME need a sweep step that watches NAME", name)
	}
	sort.Strings(names)
	return results.ProcessCost{}, fmt.Sprintf("no process %q was watched, only %s", name, strings.Join(names, ", "))
}

// Process is the NAME of a cpu.NAME or mem.NAME assertion, else "".
func (a Assertion) Process() string {
	if k := a.kind(); k == kindProcCPU || k == kindProcMem {
		return a.Metric[len("cpu."):]
	}
	return ""
}

// EvalAll judges every assertion against one run.
func EvalAll(as []Assertion, run *results.Run, watched []results.ProcessCost) []Result {
	out := make([]Result, len(as))
	for i, a := range as {
		out[i] = a.Eval(run, watched)
	}
	return out
}
