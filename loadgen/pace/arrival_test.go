package pace

import (
	"math"
	"slices"
	"testing"
	"time"
)

// gaps are the n inter-send gaps of p's schedule, in seconds.
func gaps(t *testing.T, p Pacer, n int) []float64 {
	t.Helper()
	out := make([]float64, n)
	last, ok := p.Intended(0)
	if !ok {
		t.Fatal("no first request")
	}
	for i := range out {
		at, ok := p.Intended(uint64(i + 1))
		if !ok {
			t.Fatalf("schedule ended at %d", i+1)
		}
		if at < last {
			t.Fatalf("Intended(%d) = %v before Intended(%d) = %v", i+1, at, i, last)
		}
		out[i] = (at - last).Seconds()
		last = at
	}
	return out
}

func meanVar(xs []float64) (mean, variance float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		variance += (x - mean) * (x - mean)
	}
	return mean, variance / float64(len(xs)-1)
}

// Poisson arrivals at rate λ have exponential gaps: mean 1/λ, variance
// 1/λ². (Uniform gaps have the mean and no variance; a fixed seed keeps
// the test deterministic.)
func TestPoissonGaps(t *testing.T) {
	const rate = 2000.0
	for _, seed := range []uint64{1, 42, 1 << 40} {
		p, err := WithArrival(Constant{PerSec: rate}, Poisson, 0, seed)
		if err != nil {
			t.Fatal(err)
		}
		mean, variance := meanVar(gaps(t, p, 200_000))
		if want := 1 / rate; math.Abs(mean-want) > 0.05*want {
			t.Errorf("seed %d: mean gap %.6g s, want %.6g ± 5%%", seed, mean, want)
		}
		if want := 1 / (rate * rate); math.Abs(variance-want) > 0.05*want {
			t.Errorf("seed %d: gap variance %.6g s², want %.6g ± 5%%", seed, variance, want)
		}
		if a, _ := Arrival(p); a != Poisson {
			t.Errorf("Arrival = %q", a)
		}
	}
}

// Poisson over a ramp is the non-homogeneous process: the requests due by
// the ramp's end are about its area.
func TestPoissonRamp(t *testing.T) {
	p, err := WithArrival(Ramp{From: 0, To: 10000, Over: 10 * time.Second}, Poisson, 0, 7)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for ; ; n++ {
		at, ok := p.Intended(uint64(n))
		if !ok || at >= 10*time.Second {
			break
		}
	}
	// 50000 expected, a Poisson count: sd ≈ 224.
	if n < 49000 || n > 51000 {
		t.Errorf("%d requests in the ramp's 10 s, want about 50000", n)
	}
}

// A request's time is a pure function of its index and the seed: the
// same read in any order, by a fresh pacer or the reporter's search
// going back.
func TestPoissonRandomAccess(t *testing.T) {
	fwd, _ := WithArrival(Constant{PerSec: 1000}, Poisson, 0, 3)
	want := make([]time.Duration, 300_000)
	for i := range want {
		want[i], _ = fwd.Intended(uint64(i))
	}
	back, _ := WithArrival(Constant{PerSec: 1000}, Poisson, 0, 3)
	for _, i := range []int{299_999, 5, 150_000, 65_535, 65_536, 1023, 1024, 0, 200_000, 199_999} {
		if got, _ := back.Intended(uint64(i)); got != want[i] {
			t.Errorf("Intended(%d) = %v out of order, %v in order", i, got, want[i])
		}
		if got, _ := fwd.Intended(uint64(i)); got != want[i] {
			t.Errorf("Intended(%d) = %v again, %v first", i, got, want[i])
		}
	}
	other, _ := WithArrival(Constant{PerSec: 1000}, Poisson, 0, 4)
	if a, _ := other.Intended(100); a == want[100] {
		t.Error("another seed gave the same schedule")
	}
}

// Jitter moves each gap by at most ±P% of the rate's, and the moves do not
// add up: the mean gap is the rate's.
func TestJitterGaps(t *testing.T) {
	const rate = 1000.0
	for _, pct := range []float64{10, 50, 100} {
		p, err := WithArrival(Constant{PerSec: rate}, Uniform, pct/100, 9)
		if err != nil {
			t.Fatal(err)
		}
		gs := gaps(t, p, 100_000)
		lo, hi := math.Inf(1), 0.0
		for _, g := range gs {
			lo, hi = math.Min(lo, g), math.Max(hi, g)
		}
		tick := 1e-9 // the schedule's resolution: a nanosecond either side
		if lo < (1-pct/100)/rate-tick || hi > (1+pct/100)/rate+tick {
			t.Errorf("%v%%: gaps from %.6g to %.6g s, want within ±%v%% of %.6g", pct, lo, hi, pct, 1/rate)
		}
		// The gaps do vary, by most of the range.
		if spread := (hi - lo) * rate; spread < pct/100 {
			t.Errorf("%v%%: gaps spread %.3g of a gap, want most of ±%v%%", pct, spread, pct)
		}
		mean, _ := meanVar(gs)
		if math.Abs(mean-1/rate) > 1e-4/rate {
			t.Errorf("%v%%: mean gap %.8g s, want %.8g", pct, mean, 1/rate)
		}
		if a, j := Arrival(p); a != Uniform || j != pct/100 {
			t.Errorf("Arrival = %q %v", a, j)
		}
	}
}

func TestWithArrivalErrors(t *testing.T) {
	for _, tc := range []struct {
		process string
		jitter  float64
	}{{"gaussian", 0}, {Uniform, -0.1}, {Uniform, 1.01}, {Uniform, math.NaN()}, {Poisson, 0.1}} {
		if p, err := WithArrival(Constant{PerSec: 10}, tc.process, tc.jitter, 1); err == nil {
			t.Errorf("WithArrival(%q, %v) = %v, want an error", tc.process, tc.jitter, p)
		}
	}
	if p, err := WithArrival(Constant{PerSec: 10}, Uniform, 0, 1); err != nil || p != (Constant{PerSec: 10}) {
		t.Errorf("uniform without jitter = %v, %v; want the schedule itself", p, err)
	}
	for in, want := range map[string]float64{"10%": 0.1, "0": 0, "100%": 1, " 2.5% ": 0.025} {
		if got, err := ParseJitter(in); err != nil || math.Abs(got-want) > 1e-12 {
			t.Errorf("ParseJitter(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "-1%", "101%", "abc", "10%%", "NaN"} {
		if got, err := ParseJitter(bad); err == nil {
			t.Errorf("ParseJitter(%q) = %v, want an error", bad, got)
		}
	}
}

// Drawing a Poisson schedule allocates nothing per request: the loops ask
// for every request's time.
func TestPoissonAllocatesNothing(t *testing.T) {
	p, _ := WithArrival(Constant{PerSec: 1e6}, Poisson, 0, 5)
	i := uint64(0)
	if n := testing.AllocsPerRun(100_000, func() { p.Intended(i); i++ }); n != 0 {
		t.Errorf("%v allocations per request", n)
	}
}

// What a request's time costs the loops, by arrival process.
func BenchmarkIntended(b *testing.B) {
	base := Constant{PerSec: 100000}
	poisson, _ := WithArrival(base, Poisson, 0, 1)
	jitter, _ := WithArrival(base, Uniform, 0.1, 1)
	stages, _ := Parse("0-10k/1m,10k/1m,10k-0/1m")
	for _, p := range []struct {
		name string
		p    Pacer
	}{{"uniform", base}, {"poisson", poisson}, {"jitter", jitter}, {"stages", stages}} {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := range b.N {
				p.p.Intended(uint64(i % 1_000_000))
			}
		})
	}
}

// CheckProcess is the one check of an arrival process's name: WithArrival,
// loadgen run's and sweep's --arrival call it.
func TestCheckProcess(t *testing.T) {
	for _, tc := range []struct {
		process, err string
	}{
		{"uniform", ""},
		{"poisson", ""},
		{"", `arrival "": want uniform or poisson`},
		{"Poisson", `arrival "Poisson": want uniform or poisson`},
		{"gaussian", `arrival "gaussian": want uniform or poisson`},
	} {
		err := CheckProcess(tc.process)
		if (tc.err == "") != (err == nil) || (err != nil && err.Error() != tc.err) {
			t.Errorf("CheckProcess(%q) = %v, want %q", tc.process, err, tc.err)
		}
	}
}

// Run and sweeps refuse an arrival process without an open loop in one
// message, each naming what the user asked and how to add a rate.
func TestClosedLoop(t *testing.T) {
	got := ClosedLoop("--jitter", "-R (a rate)").Error()
	want := "--jitter paces an open loop: add -R (a rate); a closed loop sends each request when the last answer came"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// ClockSeed differs from one run to the next, so that runs that give no
// seed (run's, a sweep step's) draw different arrivals.
func TestClockSeed(t *testing.T) {
	var seeds []uint64
	for range 3 {
		seeds = append(seeds, ClockSeed())
		time.Sleep(time.Millisecond)
	}
	for i, s := range seeds {
		if s == 0 {
			t.Errorf("seed %d is 0", i)
		}
		if i > 0 && s == seeds[i-1] {
			t.Errorf("seeds %d and %d are both %d", i-1, i, s)
		}
	}
	a, _ := WithArrival(Constant{PerSec: 1000}, Poisson, 0, seeds[0])
	b, _ := WithArrival(Constant{PerSec: 1000}, Poisson, 0, seeds[1])
	if ga, gb := gaps(t, a, 8), gaps(t, b, 8); slices.Equal(ga, gb) {
		t.Errorf("two clock seeds drew the same gaps %v", ga)
	}
}
