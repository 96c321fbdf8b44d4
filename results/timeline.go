package results

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"
)

// Interval is one reporting interval of a run (1 s): what was answered
// and what failed in it, and its latency. A run's Timeline lists them in
// order, the warm-up's first: a fixed, small record per interval, however
// many requests it counted.
//
// Requests count where they ended (answered, failed, timed out), as the
// summary counts them; Start is from the start of the measured window, so
// the warm-up's intervals start before 0. A warm-up interval counts the
// requests sent in the warm-up; a failed connect counts (as a connect
// error) from the measured window on, as in the summary.
type Interval struct {
	Start    Duration `json:"start_s"`    // from the start of the measured window: negative in the warm-up
	Duration Duration `json:"duration_s"` // the interval's length
	Warmup   bool     `json:"warmup,omitempty"`
	Requests int64    `json:"requests"` // responses received (any status), as Summary.Requests
	// Errors counts failed requests and connects of every class, error
	// statuses included (as Errors.Total); Timeouts and Status (error
	// statuses: Non2xx3xx) are two of its classes.
	Errors   int64   `json:"errors"`
	Timeouts int64   `json:"timeouts"`
	Status   int64   `json:"non_2xx_3xx"`
	RPS      float64 `json:"rps"` // Requests over Duration
	// Latency percentiles of every request that ended in the interval
	// (answered or failed, as Summary.Latency); zero (left out of the
	// JSON) when none did. P999 only when the interval counted at least
	// MinP999 of them.
	P50  Duration `json:"p50_us"`
	P99  Duration `json:"p99_us"`
	P999 Duration `json:"p99_9_us"`
	// Outage is set when nothing was answered and requests failed.
	Outage bool `json:"outage,omitempty"`
}

// MinP999 is how many latencies an interval needs for its p99.9.
const MinP999 = 1000

// End is when the interval ended, from the start of the measured window.
func (iv Interval) End() Duration { return iv.Start + iv.Duration }

// Attempts counts what was tried in the interval, as Summary.Attempts.
func (iv Interval) Attempts() int64 { return iv.Requests + iv.Errors - iv.Status }

// IsOutage tells whether nothing was answered in the interval and
// requests failed.
func (iv Interval) IsOutage() bool { return iv.Requests == 0 && iv.Errors > 0 }

// intervalJSON is how an Interval is written: times as numbers in their
// unit, the latencies left out where no request ended (and p99.9 where
// too few did).
type intervalJSON struct {
	Start    seconds `json:"start_s"` // negative in the warm-up
	Duration seconds `json:"duration_s"`
	Warmup   bool    `json:"warmup,omitempty"`
	Requests int64   `json:"requests"`
	Errors   int64   `json:"errors"`
	Timeouts int64   `json:"timeouts"`
	Status   int64   `json:"non_2xx_3xx"`
	RPS      float64 `json:"rps"`
	P50      *micros `json:"p50_us,omitempty"`
	P99      *micros `json:"p99_us,omitempty"`
	P999     *micros `json:"p99_9_us,omitempty"`
	Outage   bool    `json:"outage,omitempty"`
}

func (iv Interval) MarshalJSON() ([]byte, error) {
	return json.Marshal(intervalJSON{seconds(iv.Start), seconds(iv.Duration), iv.Warmup, iv.Requests, iv.Errors, iv.Timeouts,
		iv.Status, iv.RPS, optMicros(iv.P50), optMicros(iv.P99), optMicros(iv.P999), iv.Outage})
}

func (iv *Interval) UnmarshalJSON(b []byte) error {
	var v intervalJSON
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*iv = Interval{Start: Duration(v.Start), Duration: Duration(v.Duration), Warmup: v.Warmup, Requests: v.Requests,
		Errors: v.Errors, Timeouts: v.Timeouts, Status: v.Status, RPS: v.RPS, Outage: v.Outage}
	for _, p := range []struct {
		to   *Duration
		from *micros
	}{{&iv.P50, v.P50}, {&iv.P99, v.P99}, {&iv.P999, v.P999}} {
		if p.from != nil {
			*p.to = Duration(*p.from)
		}
	}
	return nil
}

func optMicros(d Duration) *micros {
	if d == 0 {
		return nil
	}
	m := micros(d)
	return &m
}

// Fold merges b, the interval after a, into a: for a timeline too long to
// keep at its resolution, or a last interval too short to stand alone.
// Counts add; a percentile takes the larger of the two, an upper bound of
// the merged one (a mixture's quantile lies between its parts').
func (a *Interval) Fold(b Interval) {
	n := a.Requests + b.Requests
	a.Duration = b.End() - a.Start
	a.Requests = n
	a.Errors += b.Errors
	a.Timeouts += b.Timeouts
	a.Status += b.Status
	if d := a.Duration.D(); d > 0 {
		a.RPS = float64(n) / d.Seconds()
	}
	a.P50, a.P99 = max(a.P50, b.P50), max(a.P99, b.P99)
	if a.P999 != 0 && b.P999 != 0 {
		a.P999 = max(a.P999, b.P999)
	} else {
		a.P999 = 0 // not known for both halves
	}
	a.Outage = a.IsOutage()
}

// Outages are the stretches of the timeline's measured intervals in which
// nothing was answered and requests failed: from, to (from the start of
// the measured window).
func Outages(tl []Interval) [][2]time.Duration {
	return outages(tl)
}

// RunOutages are a run's outages to draw: the timeline's (Outages), with
// the one the summary measured to 100 ms (Summary.Outage, from OutageAt)
// at its own bounds — an interval in which the target stopped answering
// half-way still answered, so the timeline's outage starts an interval
// late — or, when no whole interval was one, that outage alone if it
// failed the run (Summary.Outed).
func RunOutages(r *Run) [][2]time.Duration {
	out := outages(r.Timeline)
	s := r.Summary
	if s.Outage <= 0 {
		return out
	}
	at, end := s.OutageAt.D(), s.OutageAt.D()+s.Outage.D()
	for i := range out {
		if out[i][0] <= end && out[i][1] >= at {
			out[i][0], out[i][1] = min(out[i][0], at), max(out[i][1], end)
			return out
		}
	}
	if s.Outed() {
		out = append(out, [2]time.Duration{at, end})
		slices.SortFunc(out, func(a, b [2]time.Duration) int { return cmp.Compare(a[0], b[0]) })
	}
	return out
}

func outages(tl []Interval) [][2]time.Duration {
	var out [][2]time.Duration
	for _, iv := range tl {
		if iv.Warmup || !iv.IsOutage() {
			continue
		}
		if n := len(out); n > 0 && out[n-1][1] == iv.Start.D() {
			out[n-1][1] = iv.End().D()
			continue
		}
		out = append(out, [2]time.Duration{iv.Start.D(), iv.End().D()})
	}
	return out
}
