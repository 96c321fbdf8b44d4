package pace

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Arrival processes: how requests arrive around a schedule's rate.
const (
	Uniform = "uniform" // evenly spaced, as the schedule says (the default)
	Poisson = "poisson" // exponential gaps: independent arrivals at the schedule's rate
)

// Arrival is the process a pacer's requests arrive by, for reports:
// Uniform (with Jitter, a fraction of a gap, when it is varied), or Poisson.
func Arrival(p Pacer) (process string, jitter float64) {
	switch a := p.(type) {
	case *poisson:
		return Poisson, 0
	case jittered:
		return Uniform, a.frac
	}
	return Uniform, 0
}

// Schedule is the schedule under a pacer's arrival process.
func Schedule(p Pacer) Pacer {
	switch a := p.(type) {
	case *poisson:
		return a.base
	case jittered:
		return a.base
	}
	return p
}

// WithArrival puts base's requests on an arrival process: Uniform with
// jitter (a fraction of each gap, 0 to 1: fortio's --jitter) or Poisson.
// seed fixes the random draws, so a schedule is a pure function of the
// request's index and the same seed gives the same schedule.
func WithArrival(base Pacer, process string, jitter float64, seed uint64) (Pacer, error) {
	if math.IsNaN(jitter) || jitter < 0 || jitter > 1 {
		return nil, fmt.Errorf("jitter %v%%: want 0%% to 100%% of each gap", jitter*100)
	}
	switch process {
	case Uniform, "":
		if jitter == 0 {
			return base, nil
		}
		return jittered{base: base, frac: jitter, seed: seed}, nil
	case Poisson:
		if jitter != 0 {
			return nil, fmt.Errorf("jitter varies the uniform schedule's gaps; Poisson's are random already: use one")
		}
		return newPoisson(base, seed), nil
	}
	return nil, CheckProcess(process)
}

// ClockSeed is a seed for an arrival process's draws (WithArrival) taken
// from the clock, so that runs that give none draw differently: run's and
// a sweep step's.
func ClockSeed() uint64 { return uint64(time.Now().UnixNano()) }

// CheckProcess refuses an arrival process other than Uniform and Poisson
// (the empty one too: the caller that allows it as the default says so).
// Its error reads `arrival "x": want …`; the CLI's puts "--" before it.
func CheckProcess(process string) error {
	if process == Uniform || process == Poisson {
		return nil
	}
	return fmt.Errorf("arrival %q: want uniform or poisson", process)
}

// ClosedLoop is the error of an arrival process or a jitter asked of a
// load with no open loop, for run and sweeps alike: asked names them as the
// user gave them, add how to ask for a rate.
func ClosedLoop(asked, add string) error {
	return fmt.Errorf("%s paces an open loop: add %s; a closed loop sends each request when the last answer came", asked, add)
}

// ParseJitter reads --jitter: a percentage of each gap, 0 to 100 ("10%"
// or "10").
func ParseJitter(s string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "%"), 64)
	if err != nil || math.IsNaN(v) || v < 0 || v > 100 {
		return 0, fmt.Errorf("jitter %q: want a percentage of each gap from 0%% to 100%%, e.g. 10%%", s)
	}
	return v / 100, nil
}

// jittered moves request i of base by frac·u(i) of a gap, u uniform in
// [0, 1): gap i is (1 + frac·(u(i+1) − u(i))) of base's, within ±frac of
// it, and the moves do not add up, so the mean gap is base's.
type jittered struct {
	base Pacer
	frac float64
	seed uint64
}

func (j jittered) Intended(i uint64) (time.Duration, bool) {
	return j.base.At(float64(i) + j.frac*unit(j.seed, i))
}

func (j jittered) At(n float64) (time.Duration, bool) { return j.base.At(n) }

func (j jittered) Rate(at time.Duration) float64 { return j.base.Rate(at) }

func (j jittered) String() string { return j.base.String() }

// unit is a uniform draw in [0, 1) from (seed, i): splitmix64's finalizer.
func unit(seed, i uint64) float64 {
	z := seed + (i+1)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	return float64(z>>11) / (1 << 53)
}

// Poisson's schedule is cut into blocks of poissonBlock requests: a
// block's gaps are drawn from a PCG seeded with (seed, block), so any
// request's time can be computed again, and the cumulative count at every
// poissonMark-th block is kept (8 bytes per 64 Ki requests), so a time far
// back (the reporter's count of a window) costs at most poissonMark blocks.
const (
	poissonBlock = 1024
	poissonMark  = 64
	poissonSlots = 4 // blocks kept whole: the one being sent, and stragglers
)

// poisson puts base's requests on a Poisson process: unit exponential gaps
// in base's cumulative count, so the gaps have the exponential's mean and
// variance at base's rate (a time change makes it the non-homogeneous
// process of a ramp). Request i is due at base.At(S(i)), S(i) the sum of i
// gaps: a pure function of i, memoized per block under a lock that the
// loops take for a few nanoseconds (a block is drawn once per 1024
// requests, in about 15 µs).
type poisson struct {
	base Pacer
	seed uint64

	mu    sync.Mutex
	marks []float64 // marks[k]: S at block k·poissonMark
	slots [poissonSlots]poissonSlot
}

type poissonSlot struct {
	block uint64
	valid bool
	s     [poissonBlock + 1]float64 // s[j]: S at the block's j-th request; s[poissonBlock] the next block's start
}

func newPoisson(base Pacer, seed uint64) *poisson {
	p := &poisson{base: base, seed: seed, marks: make([]float64, 1, 1024)}
	return p
}

func (p *poisson) Intended(i uint64) (time.Duration, bool) {
	b, j := i/poissonBlock, i%poissonBlock
	p.mu.Lock()
	sl := &p.slots[b%poissonSlots]
	if !sl.valid || sl.block != b {
		p.fill(sl, b)
	}
	n := sl.s[j]
	p.mu.Unlock()
	return p.base.At(n)
}

func (p *poisson) At(n float64) (time.Duration, bool) { return p.base.At(n) }

func (p *poisson) Rate(at time.Duration) float64 { return p.base.Rate(at) }

func (p *poisson) String() string { return p.base.String() }

// fill draws block b into sl, from the block before it when a slot holds
// it (the run going forward), else from the last mark before it.
func (p *poisson) fill(sl *poissonSlot, b uint64) {
	var start float64
	if prev := &p.slots[(b-1)%poissonSlots]; b > 0 && prev.valid && prev.block == b-1 {
		start = prev.s[poissonBlock]
	} else {
		start = p.startOf(b)
	}
	sl.block, sl.valid = b, true
	p.draw(b, start, sl.s[:])
	if (b+1)%poissonMark == 0 && uint64(len(p.marks)) == (b+1)/poissonMark {
		p.marks = append(p.marks, sl.s[poissonBlock])
	}
}

// startOf is S at block b's first request, from the marks, adding marks
// as it passes them.
func (p *poisson) startOf(b uint64) float64 {
	k := b / poissonMark
	if k >= uint64(len(p.marks)) {
		k = uint64(len(p.marks)) - 1
	}
	s := p.marks[k]
	var scratch [poissonBlock + 1]float64
	for c := k * poissonMark; c < b; c++ {
		p.draw(c, s, scratch[:])
		s = scratch[poissonBlock]
		if (c+1)%poissonMark == 0 && uint64(len(p.marks)) == (c+1)/poissonMark {
			p.marks = append(p.marks, s)
		}
	}
	return s
}

// draw writes block b's cumulative counts from start: s[0] = start, then
// one unit exponential gap after another. The same b always gives the
// same sums, whichever way it was reached.
func (p *poisson) draw(b uint64, start float64, s []float64) {
	var src rand.PCG
	src.Seed(p.seed, b)
	s[0] = start
	for j := 1; j < len(s); j++ {
		// 1 − u is in (0, 1]: the logarithm is finite.
		u := float64(src.Uint64()>>11) / (1 << 53)
		s[j] = s[j-1] - math.Log(1-u)
	}
}
