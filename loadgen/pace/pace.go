// Package pace holds the open-loop pacers: pure functions from a request's
// sequence number to its intended start, offset from the start of the run.
// They never sleep and never read the clock, so they are tested with tables.
// A schedule (Constant, Ramp, Step) says how many requests are due by when;
// an arrival process (Poisson, Jitter) moves each request around that
// schedule's time.
package pace

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"loadgen/internal/units"
)

// Pacer tells when the i-th request (from 0) is meant to start. ok is false
// when the schedule has no i-th request.
type Pacer interface {
	Intended(i uint64) (offset time.Duration, ok bool)
	// At is Intended at a fractional request count n >= 0: when the
	// schedule has started n requests, the inverse of its cumulative
	// count. Arrival processes move requests along it.
	At(n float64) (offset time.Duration, ok bool)
	// Rate is the asked rate (requests/s) at an offset, for reports.
	Rate(at time.Duration) float64
	// String is the spec Parse reads back.
	String() string
}

// Constant paces PerSec requests every second, evenly spaced.
type Constant struct{ PerSec float64 }

func (c Constant) Intended(i uint64) (time.Duration, bool) { return c.At(float64(i)) }

func (c Constant) At(n float64) (time.Duration, bool) {
	if c.PerSec <= 0 {
		return 0, false
	}
	return seconds(n / c.PerSec), true
}

func (c Constant) Rate(time.Duration) float64 { return c.PerSec }

// String is the spec Parse reads back.
func (c Constant) String() string { return num(c.PerSec) }

// Ramp raises (or lowers) the rate linearly from From to To over Over, then
// holds To.
type Ramp struct {
	From, To float64
	Over     time.Duration
}

func (r Ramp) Intended(i uint64) (time.Duration, bool) { return r.At(float64(i)) }

func (r Ramp) At(n float64) (time.Duration, bool) {
	D := r.Over.Seconds()
	if D <= 0 {
		return Constant{r.To}.At(n)
	}
	// Requests by time t (t <= D): N(t) = From·t + (To−From)·t²/(2D).
	total := (r.From + r.To) / 2 * D
	if n >= total {
		if r.To <= 0 {
			return 0, false
		}
		return seconds(D + (n-total)/r.To), true
	}
	a := (r.To - r.From) / (2 * D)
	if math.Abs(a) < 1e-12 {
		if r.From <= 0 {
			return 0, false
		}
		return seconds(n / r.From), true
	}
	// a·t² + From·t − n = 0, the root in [0, D].
	disc := r.From*r.From + 4*a*n
	if disc < 0 {
		disc = 0
	}
	return seconds((-r.From + math.Sqrt(disc)) / (2 * a)), true
}

// String is the spec Parse reads back: ramp:FROM-TO/OVER.
func (r Ramp) String() string { return "ramp:" + num(r.From) + "-" + num(r.To) + "/" + r.Over.String() }

func (r Ramp) Rate(at time.Duration) float64 {
	if at >= r.Over || r.Over <= 0 {
		return r.To
	}
	return r.From + (r.To-r.From)*at.Seconds()/r.Over.Seconds()
}

// Step starts at Start requests/s and adds Step every Every, up to Max (0 =
// no maximum): the staircase used to find where latency breaks.
type Step struct {
	Start, Step, Max float64
	Every            time.Duration
}

func (s Step) level(k int) float64 {
	r := s.Start + float64(k)*s.Step
	if s.Max > 0 && r > s.Max {
		r = s.Max
	}
	return r
}

func (s Step) Intended(i uint64) (time.Duration, bool) { return s.At(float64(i)) }

func (s Step) At(n float64) (time.Duration, bool) {
	if s.Every <= 0 || s.Step <= 0 {
		return Constant{s.Start}.At(n)
	}
	if s.Start <= 0 {
		return 0, false
	}
	per := s.Every.Seconds()
	// Requests in the first K steps: S(K) = per·(K·Start + Step·K(K−1)/2).
	sum := func(k float64) float64 { return per * (k*s.Start + s.Step*k*(k-1)/2) }
	last := math.Inf(1) // the step from which the rate holds at Max
	if s.Max > 0 {
		last = math.Max(0, math.Ceil((s.Max-s.Start)/s.Step))
	}
	// The largest K with S(K) <= n, from the quadratic, then fixed up for
	// rounding.
	a, b := s.Step/2, s.Start-s.Step/2
	k := math.Floor((-b + math.Sqrt(b*b+4*a*n/per)) / (2 * a))
	k = math.Max(0, math.Min(k, last))
	for k > 0 && sum(k) > n {
		k--
	}
	for k+1 <= last && sum(k+1) <= n {
		k++
	}
	return seconds(k*per + (n-sum(k))/s.level(int(math.Min(k, 1<<30)))), true
}

// String is the spec Parse reads back: step:START+STEP/EVERY[,max=N].
func (s Step) String() string {
	spec := "step:" + num(s.Start) + "+" + num(s.Step) + "/" + s.Every.String()
	if s.Max > 0 {
		spec += ",max=" + num(s.Max)
	}
	return spec
}

func (s Step) Rate(at time.Duration) float64 {
	if s.Every <= 0 {
		return s.Start
	}
	return s.level(int(at / s.Every))
}

// Parse reads a rate spec: "1000" or "1.5k" (constant), stages
// "0-2k/30s,2k/2m,2k-0/10s" (a ramp, a hold, a ramp: Stages, which end with
// the last), "ramp:100-5k/30s" (then held), "step:1000+500/5s" or
// "step:1k+500/5s,max=8k". Rates take SI suffixes and
// durations plain seconds, as everywhere in loadgen.
func Parse(s string) (Pacer, error) {
	t := strings.TrimSpace(s)
	switch {
	case strings.HasPrefix(t, "ramp:"):
		rates, over, ok := cutDuration(strings.TrimPrefix(t, "ramp:"))
		from, to, ok2 := strings.Cut(rates, "-")
		a, err1 := units.ParseRate(from)
		b, err2 := units.ParseRate(to)
		if !ok || !ok2 || err1 != nil || err2 != nil || over <= 0 || b <= 0 {
			return nil, fmt.Errorf("rate %q: want ramp:FROM-TO/DURATION with TO > 0, e.g. ramp:100-5000/30s", s)
		}
		return Ramp{From: a, To: b, Over: over}, nil
	case strings.HasPrefix(t, "step:"):
		body, maxPart, hasMax := strings.Cut(strings.TrimPrefix(t, "step:"), ",")
		rates, every, ok := cutDuration(body)
		start, step, ok2 := strings.Cut(rates, "+")
		a, err1 := units.ParseRate(start)
		b, err2 := units.ParseRate(step)
		if !ok || !ok2 || err1 != nil || err2 != nil || every <= 0 || a <= 0 {
			return nil, fmt.Errorf("rate %q: want step:START+STEP/EVERY, e.g. step:1000+500/5s", s)
		}
		st := Step{Start: a, Step: b, Every: every}
		if hasMax {
			m, err := units.ParseRate(strings.TrimPrefix(maxPart, "max="))
			if !strings.HasPrefix(maxPart, "max=") || err != nil || m <= 0 {
				return nil, fmt.Errorf("rate %q: after ',' want max=N", s)
			}
			st.Max = m
		}
		return st, nil
	}
	if strings.Contains(t, "/") {
		return parseStages(t)
	}
	r, err := units.ParseRate(t)
	if err != nil {
		return nil, fmt.Errorf("rate %q: want requests/s (e.g. 2000 or 1.5k), stages (0-2k/30s,2k/2m), ramp:FROM-TO/DUR or step:START+STEP/EVERY", s)
	}
	if r <= 0 {
		return nil, fmt.Errorf("rate %q: must be a positive number of requests/s", s)
	}
	return Constant{PerSec: r}, nil
}

// cutDuration splits "RATES/DURATION".
func cutDuration(s string) (string, time.Duration, bool) {
	i := strings.LastIndexByte(s, '/')
	if i < 0 {
		return s, 0, false
	}
	d, err := units.ParseDuration(s[i+1:])
	return s[:i], d, err == nil
}

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func seconds(s float64) time.Duration {
	if s >= math.MaxInt64/1e9 {
		return math.MaxInt64
	}
	return time.Duration(s * 1e9)
}
