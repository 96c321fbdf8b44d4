package pace

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"loadgen/internal/units"
)

// Stage is one part of a Stages schedule: the rate goes linearly from From
// to To requests/s over Over (a hold when they are equal).
type Stage struct {
	From, To float64
	Over     time.Duration
}

// String is the stage as Parse reads it: 2000/2m or 0-2000/30s.
func (s Stage) String() string {
	if s.From == s.To {
		return num(s.To) + "/" + units.FormatDuration(s.Over)
	}
	return num(s.From) + "-" + num(s.To) + "/" + units.FormatDuration(s.Over)
}

// count is how many requests the stage starts.
func (s Stage) count() float64 { return (s.From + s.To) / 2 * s.Over.Seconds() }

// MaxStages bounds a Stages schedule's length.
const MaxStages = 100

// Stages is a list of stages run one after the other (k6's
// ramping-arrival-rate): the schedule ends with the last.
type Stages struct {
	list  []Stage
	total time.Duration
	count float64
	// before[k] are the requests of the stages before k, start[k] when k
	// starts.
	before []float64
	start  []time.Duration
}

// NewStages makes a schedule of the stages, checked: each longer than 0,
// rates finite and not negative, at least one request in all.
func NewStages(list []Stage) (*Stages, error) {
	if len(list) == 0 || len(list) > MaxStages {
		return nil, fmt.Errorf("want 1 to %d stages, got %d", MaxStages, len(list))
	}
	s := &Stages{list: append([]Stage(nil), list...)}
	for i, st := range list {
		switch {
		case st.Over <= 0:
			return nil, fmt.Errorf("stage %d (%s): its duration must be positive", i+1, st)
		case !(st.From >= 0 && st.To >= 0) || math.IsInf(st.From, 0) || math.IsInf(st.To, 0):
			return nil, fmt.Errorf("stage %d: rates must be 0 or more requests/s", i+1)
		case s.total > math.MaxInt64/2-st.Over:
			return nil, fmt.Errorf("stage %d: the stages last too long", i+1)
		}
		s.before = append(s.before, s.count)
		s.start = append(s.start, s.total)
		s.count += st.count()
		s.total += st.Over
	}
	if !(s.count >= 1) || math.IsInf(s.count, 0) {
		return nil, fmt.Errorf("the stages start %g requests: want at least one", s.count)
	}
	return s, nil
}

// List is the stages, in order.
func (s *Stages) List() []Stage { return s.list }

// Total is how long the stages last: the schedule's end.
func (s *Stages) Total() time.Duration { return s.total }

// Window is the measured window of a run on s: what the stages leave
// after the warm-up. A duration given (-d) must end with the last stage.
func (s *Stages) Window(warmup, d time.Duration, given bool) (time.Duration, error) {
	total := s.Total()
	if warmup >= total {
		return 0, fmt.Errorf("--warmup %v: the stages last %v in all, warm-up included: nothing would be measured", warmup, total)
	}
	if given && warmup+d != total {
		what := fmt.Sprintf("the stages last %v", total)
		if warmup > 0 {
			what += fmt.Sprintf(", --warmup %v included", warmup)
		}
		return 0, fmt.Errorf("-d %v: %s: leave -d out, the run lasts as long as its stages", d, what)
	}
	return total - warmup, nil
}

// StartOf is when stage k starts, from the schedule's start.
func (s *Stages) StartOf(k int) time.Duration { return s.start[k] }

func (s *Stages) Intended(i uint64) (time.Duration, bool) { return s.At(float64(i)) }

func (s *Stages) At(n float64) (time.Duration, bool) {
	if !(n >= 0) || n >= s.count {
		return 0, false
	}
	// The last stage that starts at or before the n-th request; stages
	// that start none (at 0/s) are passed over.
	k, lo, hi := 0, 0, len(s.list)-1
	for lo <= hi {
		m := (lo + hi) / 2
		if s.before[m] <= n {
			k, lo = m, m+1
		} else {
			hi = m - 1
		}
	}
	// Stages of no requests (at 0/s) share their before with the next:
	// the search passed over them.
	st := s.list[k]
	d, ok := Ramp(st).At(n - s.before[k])
	if !ok {
		return 0, false
	}
	return s.start[k] + min(d, st.Over), true
}

// Rate is the stages' rate at an offset: the last stage's at its end, 0
// after it.
func (s *Stages) Rate(at time.Duration) float64 {
	if at < 0 {
		return 0
	}
	if at >= s.total {
		if at == s.total {
			return s.list[len(s.list)-1].To
		}
		return 0
	}
	k := s.StageAt(at)
	st := s.list[k]
	return st.From + (st.To-st.From)*(at-s.start[k]).Seconds()/st.Over.Seconds()
}

// StageAt is the stage an offset falls in (the last one at or after the
// end).
func (s *Stages) StageAt(at time.Duration) int {
	k, lo, hi := 0, 0, len(s.list)-1
	for lo <= hi {
		m := (lo + hi) / 2
		if s.start[m] <= at {
			k, lo = m, m+1
		} else {
			hi = m - 1
		}
	}
	return k
}

// String is the spec Parse reads back: the stages, comma-separated.
func (s *Stages) String() string {
	parts := make([]string, len(s.list))
	for i, st := range s.list {
		parts[i] = st.String()
	}
	return strings.Join(parts, ",")
}

// parseStages reads "0-2k/30s,2k/2m,2k-0/10s".
func parseStages(spec string) (*Stages, error) {
	var list []Stage
	for i, part := range strings.Split(spec, ",") {
		if i >= MaxStages {
			return nil, fmt.Errorf("rate %q: at most %d stages", spec, MaxStages)
		}
		rates, over, ok := cutDuration(strings.TrimSpace(part))
		if !ok {
			return nil, fmt.Errorf("rate %q: stage %d %q: want RATE/DURATION or FROM-TO/DURATION, e.g. 2k/2m or 0-2k/30s", spec, i+1, part)
		}
		from, to, ramp := strings.Cut(rates, "-")
		a, err1 := units.ParseRate(from)
		b, err2 := a, error(nil)
		if ramp {
			b, err2 = units.ParseRate(to)
		}
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("rate %q: stage %d %q: want RATE/DURATION or FROM-TO/DURATION with rates in requests/s, e.g. 2k/2m or 0-2k/30s", spec, i+1, part)
		}
		list = append(list, Stage{From: a, To: b, Over: over})
	}
	s, err := NewStages(list)
	if err != nil {
		return nil, fmt.Errorf("rate %q: %w", spec, err)
	}
	return s, nil
}

// ParseConnSchedule reads -c as a closed loop's connection schedule:
// stages of counts, "10-200/1m,200/2m" (Parse's stages, each count a whole
// number), at most maxConns connections at the peak. It returns the
// stages and their peak, the connections the run opens.
func ParseConnSchedule(s string, maxConns int) (*Stages, int, error) {
	p, err := Parse(s)
	if err != nil {
		return nil, 0, err
	}
	st, ok := p.(*Stages)
	if !ok {
		return nil, 0, fmt.Errorf("%q: want a count or stages of counts, e.g. 10-200/1m,200/2m", s)
	}
	peak := 0.0
	for _, x := range st.List() {
		if x.From != math.Trunc(x.From) || x.To != math.Trunc(x.To) {
			return nil, 0, fmt.Errorf("%q: connection counts are whole numbers", s)
		}
		peak = max(peak, x.From, x.To)
	}
	if peak > float64(maxConns) {
		return nil, 0, fmt.Errorf("%q: at most %d connections", s, maxConns)
	}
	return st, int(peak), nil
}

// ParseConns reads -c: a count of connections (units.ParseIntCount), or,
// with a '/', a closed loop's connection schedule (ParseConnSchedule),
// whose peak is then the count. schedule is s for a schedule, "" for a
// count.
func ParseConns(s string, maxConns int) (conns int, schedule string, err error) {
	if !strings.Contains(s, "/") {
		n, err := units.ParseIntCount(s)
		if err != nil {
			return 0, "", err
		}
		return n, "", nil
	}
	_, peak, err := ParseConnSchedule(s, maxConns)
	if err != nil {
		return 0, "", err
	}
	return peak, s, nil
}

// ReadStages reads -R's @FILE: stages one per line (blank lines and #
// comments skipped), returned as one comma-separated spec for Parse. Any
// rate not starting with @ is the spec itself. An error starts with the
// @FILE, for the flag's name to go before it.
func ReadStages(rate string) (string, error) {
	name, ok := strings.CutPrefix(rate, "@")
	if !ok {
		return rate, nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return "", fmt.Errorf("@%s: %w", name, errors.Unwrap(err))
	}
	var stages []string
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		if line = strings.TrimSpace(line); line != "" {
			stages = append(stages, line)
		}
	}
	if len(stages) == 0 {
		return "", fmt.Errorf("@%s: no stages in the file", name)
	}
	return strings.Join(stages, ","), nil
}
