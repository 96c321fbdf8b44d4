package sweep

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"loadgen/loadgen"
	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/http1"
	"loadgen/results"
	"loadgen/results/store"
	"loadgen/targets/httpbin"
)

// A target that holds its SLO up to capacity, probed with noise: the
// probes listed in noisy (counted from 1) miss the SLO whatever their rate,
// and so do the first noisyAt[r] probes at rate r.
type simulated struct {
	capacity float64
	noisy    map[int]bool
	noisyAt  map[float64]int
	probes   []string
}

func (s *simulated) try(rate float64, attempt int) (Probe, error) {
	s.probes = append(s.probes, fmt.Sprintf("%g#%d", rate, attempt))
	if s.noisy[len(s.probes)] || attempt <= s.noisyAt[rate] {
		return Probe{Why: "noise"}, nil
	}
	if rate > s.capacity {
		return Probe{Why: "over capacity"}, nil
	}
	return Probe{OK: true}, nil
}

// The search brackets the capacity within 5% from below or above it,
// with no noise, with a noisy probe in the climb or in the bisection, and
// with one at the very start; a failure is believed only when repeated.
func TestSearchBracketsCapacityDespiteNoise(t *testing.T) {
	for _, tc := range []struct {
		name     string
		capacity float64
		start    float64
		noisy    []int
		noisyAt  map[float64]int
	}{
		{"quiet, climbing", 730, 100, nil, nil},
		{"quiet, descending", 73, 1000, nil, nil},
		{"noise in the climb", 3100, 100, []int{2}, nil},
		{"noise at the start", 3100, 100, []int{1}, nil},
		{"noise in the bisection", 3100, 100, []int{11}, nil},
		{"noise twice, far apart", 3100, 100, []int{3, 12}, nil},
		// A burst: one rate misses twice in a row, a believable failure;
		// twice the rate holds, so the climb goes on.
		{"a burst of noise in the climb", 3100, 100, nil, map[float64]int{200: 2}},
		{"a burst of noise at the start", 3100, 100, nil, map[float64]int{100: 2}},
		// In the bisection: the bracket closes on the noisy rate, which
		// judged again holds, and the bisection goes on above it.
		{"a burst of noise in the bisection", 3100, 100, nil, map[float64]int{2800: 2}},
		// As measured here once: 25600/s missed twice in a row and its
		// double missed too (above capacity), then 19200 in the bisection.
		{"bursts in the climb and the bisection", 37000, 100, []int{5, 10}, map[float64]int{25600: 2, 19200: 2}},
		// As measured here once: the start and its double both missed
		// twice; once both were refuted, no failing rate was left and the
		// search must climb on, not report the last rate as the ceiling's.
		{"a burst over the start and its double", 1450, 100, nil, map[float64]int{100: 2, 200: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim := &simulated{capacity: tc.capacity, noisy: map[int]bool{}, noisyAt: tc.noisyAt}
			for _, n := range tc.noisy {
				sim.noisy[n] = true
			}
			pass, fail, err := search(tc.start, sim.try)
			if err != nil {
				t.Fatal(err)
			}
			if pass == nil || fail == nil {
				t.Fatalf("no bracket: pass %+v, fail %+v (probes %v)", pass, fail, sim.probes)
			}
			if !(pass.Rate <= tc.capacity && tc.capacity < fail.Rate) {
				t.Errorf("bracket [%g, %g) does not hold the capacity %g (probes %v)", pass.Rate, fail.Rate, tc.capacity, sim.probes)
			}
			if (fail.Rate-pass.Rate)/pass.Rate > findMaxClose {
				t.Errorf("bracket [%g, %g) wider than 5%%", pass.Rate, fail.Rate)
			}
			if fail.Probes-fail.Passed < agree || fail.OK || fail.Judged < 2 || !pass.Confirmed() {
				t.Errorf("lowest failing %+v rests on fewer than %d failures or was not judged twice, or the highest held %+v is not confirmed", fail, agree, pass)
			}
			t.Logf("probes %v", sim.probes)
			if len(sim.probes) > 32 { // 30 and the confirmation of the rate reported
				t.Errorf("%d probes: %v", len(sim.probes), sim.probes)
			}
		})
	}
}

// A target that holds at no rate: the search halves down to 1/s and
// stops there, with nothing passing.
func TestSearchNothingHolds(t *testing.T) {
	sim := &simulated{capacity: 0}
	pass, fail, err := search(100, sim.try)
	if err != nil || pass != nil || fail == nil || fail.Rate != 1 || len(sim.probes) > 20 {
		t.Errorf("pass %+v, fail %+v, err %v after probes %v", pass, fail, err, sim.probes)
	}
}

// On a machine where any probe below capacity misses the SLO one time in
// four, searches agree: nineteen in twenty end within 15% of the capacity
// (and none above it: a probe above capacity always fails).
func TestSearchUnderRandomNoise(t *testing.T) {
	const capacity, runs = 3100.0, 200
	rng := rand.New(rand.NewPCG(1, 2))
	close, probes := 0, 0
	for range runs {
		try := func(rate float64, attempt int) (Probe, error) {
			probes++
			if rate > capacity || rng.Float64() < 0.25 {
				return Probe{Why: "miss"}, nil
			}
			return Probe{OK: true}, nil
		}
		pass, _, err := search(100, try)
		if err != nil {
			t.Fatal(err)
		}
		if pass != nil && pass.Rate > capacity {
			t.Fatalf("held at %g, above the capacity", pass.Rate)
		}
		if pass != nil && !pass.Confirmed() {
			t.Fatalf("reported %+v, not confirmed", pass)
		}
		if pass != nil && pass.Rate >= 0.85*capacity {
			close++
		}
	}
	t.Logf("%d of %d searches within 15%% of the capacity, %.1f probes each", close, runs, float64(probes)/runs)
	if close < runs*95/100 {
		t.Errorf("%d of %d searches within 15%% of the capacity", close, runs)
	}
}

// A verdict: a rate fails on two misses and holds on two passes, of at
// most three probes; exploring, one pass is believed for now; a
// confirmation goes on from it.
func TestVerdictRule(t *testing.T) {
	for _, tc := range []struct {
		outcomes       string // + held, - missed, in order
		confirm        bool
		ok             bool
		probes, passed int
	}{
		{"+", false, true, 1, 1}, // provisional
		{"--", false, false, 2, 0},
		{"-+", false, true, 2, 1}, // provisional
		{"++", true, true, 2, 2},  // two held: no third probe
		{"--", true, false, 2, 0}, // two missed: no third probe
		{"+-+", true, true, 3, 2},
		{"-++", true, true, 3, 2},
		{"+--", true, false, 3, 1}, // held 1/3 does not hold
		{"-+-", true, false, 3, 1},
	} {
		i := 0
		s := newSearcher(func(_ float64, attempt int) (Probe, error) {
			if attempt != i+1 {
				t.Errorf("%s: attempt %d, want %d", tc.outcomes, attempt, i+1)
			}
			ok := tc.outcomes[i] == '+'
			i++
			return Probe{OK: ok, Why: "why"}, nil
		})
		v, err := s.judge(100, Verdict{}, tc.confirm)
		if err != nil || v.OK != tc.ok || v.Probes != tc.probes || v.Passed != tc.passed || i != len(tc.outcomes) {
			t.Errorf("%s (confirm %v): verdict %+v after %d probes (err %v), want ok %v on %d probes, %d held",
				tc.outcomes, tc.confirm, v, i, err, tc.ok, tc.probes, tc.passed)
		}
	}
}

// scripted is a target that holds up to capacity, except at the rates of
// script, whose probes go as their string says (+ held, - missed, from
// the first attempt; past its end, by capacity); flags saturates the
// generator (G) or the machine (M) during the probes it names
// ("200#1").
type scripted struct {
	capacity float64
	script   map[float64]string
	flags    map[string]string
}

func (s scripted) try(rate float64, attempt int) (Probe, error) {
	id := fmt.Sprintf("%g#%d", rate, attempt)
	p := Probe{ID: id, OK: rate <= s.capacity, P99: Micros(time.Millisecond),
		Generator: &GeneratorState{Utilization: 0.3}, Machine: &results.MachineCost{CPUs: 2, BusyCores: 0.8, Utilization: 0.4}}
	if sc := s.script[rate]; attempt <= len(sc) {
		p.OK = sc[attempt-1] == '+'
	}
	if !p.OK {
		p.Why, p.P99 = "p99 missed", Micros(time.Second)
	}
	if strings.Contains(s.flags[id], "G") {
		p.Generator = &GeneratorState{Utilization: 0.97, Saturated: true}
	}
	if strings.Contains(s.flags[id], "M") {
		p.Machine = &results.MachineCost{CPUs: 2, BusyCores: 1.96, Utilization: 0.98, Saturated: true}
	}
	return p, nil
}

// The search with a fake prober, its figures scripted: the rate reported
// held in two of at most three probes at that rate (held 2/3 counts, 1/3
// does not), confirming stops early once two agree, and the probes during
// which the generator or the machine was saturated are flagged, with the
// result saying it measures contention.
func TestFindMaxSearchRules(t *testing.T) {
	for _, tc := range []struct {
		name    string
		target  scripted
		rate    float64         // the rate reported
		held    string          // its verdict, held/probes
		fail    float64         // the lowest failing rate
		probes  map[float64]int // probes made at these rates
		flagged []string        // the probes flagged, rate#attempt:flags
	}{
		{name: "quiet", target: scripted{capacity: 100},
			rate: 100, held: "2/2", fail: 104, probes: map[float64]int{100: 2, 200: 2, 400: 2, 104: 4}},
		{name: "held 2/3 counts", target: scripted{capacity: 100, script: map[float64]string{100: "+-+"}},
			rate: 100, held: "2/3", fail: 104, probes: map[float64]int{100: 3}},
		// Refuted, 100/s is the lowest failing rate; the search goes on
		// below it and reports the highest rate confirmed there.
		{name: "held 1/3 does not count", target: scripted{capacity: 99, script: map[float64]string{100: "+--"}},
			rate: 97, held: "2/2", fail: 100, probes: map[float64]int{100: 5, 97: 2}},
		{name: "held 1/3 does not count, then 2/3 below", target: scripted{capacity: 99, script: map[float64]string{100: "+--", 97: "+-+"}},
			rate: 97, held: "2/3", fail: 100, probes: map[float64]int{100: 5, 97: 3}},
		// Two held: confirmed without a third probe; two missed: failed
		// without one (200/s, and 400/s checked above it).
		{name: "early stop", target: scripted{capacity: 100, script: map[float64]string{100: "++", 200: "--", 400: "--"}},
			rate: 100, held: "2/2", fail: 104, probes: map[float64]int{100: 2, 200: 2, 400: 2}},
		// A miss in the climb is probed again; a pass refutes it, and the
		// verdict, once reported, is confirmed on its two held probes.
		{name: "a miss refuted in the climb", target: scripted{capacity: 100, script: map[float64]string{50: "-+"}},
			rate: 100, held: "2/2", fail: 104, probes: map[float64]int{50: 2, 100: 2}},
		{name: "saturated probes flagged", target: scripted{capacity: 100, flags: map[string]string{"200#1": "M", "100#2": "G", "400#2": "GM"}},
			rate: 100, held: "2/2", fail: 104, flagged: []string{"200#1:M", "400#2:GM", "100#2:G"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := 100.0
			if tc.name == "a miss refuted in the climb" {
				start = 50
			}
			var m Max
			if err := searchMax(&m, start, tc.target.try); err != nil {
				t.Fatal(err)
			}
			var seq []string
			at := map[float64]int{}
			for _, p := range m.Probes {
				seq = append(seq, fmt.Sprintf("%g#%d%s", p.Rate, p.Attempt, map[bool]string{true: "+", false: "-"}[p.OK]))
				at[p.Rate]++
			}
			t.Logf("probes %v", seq)
			if m.Rate != tc.rate || m.Pass == nil || fmt.Sprintf("%d/%d", m.Pass.Passed, m.Pass.Probes) != tc.held || !m.Pass.Confirmed() {
				t.Errorf("reported %g, held %+v; want %g held %s", m.Rate, m.Pass, tc.rate, tc.held)
			}
			if m.Fail == nil || m.Fail.Rate != tc.fail || m.Fail.OK {
				t.Errorf("lowest failing %+v, want %g", m.Fail, tc.fail)
			}
			for rate, n := range tc.probes {
				if at[rate] != n {
					t.Errorf("%d probes at %g/s, want %d", at[rate], rate, n)
				}
			}
			if m.P99.D() != time.Millisecond {
				t.Errorf("p99 at max %v", m.P99.D())
			}
			var flagged []string
			for _, c := range m.Contended {
				flagged = append(flagged, fmt.Sprintf("%g#%d:%s", c.Rate, c.Attempt, c.Flags))
				if c.ID != fmt.Sprintf("%g#%d", c.Rate, c.Attempt) {
					t.Errorf("contended probe %+v: id", c)
				}
			}
			if strings.Join(flagged, " ") != strings.Join(tc.flagged, " ") || m.MeasuresContention != (len(tc.flagged) > 0) {
				t.Errorf("flagged %v (measures contention %v), want %v", flagged, m.MeasuresContention, tc.flagged)
			}
			ms := m.Machine
			wantM, wantG := 0, 0
			for _, f := range tc.flagged {
				if strings.Contains(f, "M") {
					wantM++
				}
				if strings.Contains(f, ":G") {
					wantG++
				}
			}
			if ms == nil || ms.CPUs != 2 || ms.Measured != len(m.Probes) || ms.MachineSaturated != wantM || ms.GeneratorSaturated != wantG ||
				ms.UtilizationMin != 0.4 || ms.UtilizationMedian != 0.4 || (wantM > 0) != (ms.UtilizationMax == 0.98) {
				t.Errorf("machine %+v", ms)
			}
		})
	}
}

// A search stopped before it confirmed the rate it would report reports
// none: the rate that held once is in the bracket, unconfirmed.
func TestFindMaxUnconfirmedIsNotReported(t *testing.T) {
	target := scripted{capacity: 100}
	var m Max
	stop := errors.New("stopped")
	err := searchMax(&m, 100, func(rate float64, attempt int) (Probe, error) {
		p, _ := target.try(rate, attempt)
		if rate == 100 && attempt == 2 {
			return p, stop
		}
		return p, nil
	})
	if !errors.Is(err, stop) || m.Rate != 0 || m.Pass == nil || m.Pass.Rate != 100 || m.Pass.Confirmed() {
		t.Errorf("err %v, reported %g, highest held %+v", err, m.Rate, m.Pass)
	}
}

// A real target whose capacity is known: httpbin's /delay/20ms over 4
// connections serves at most 4 / 20ms = 200 requests/s (Little's law);
// above it requests queue and their latency, measured from their intended
// start, grows without bound. FindMax finds it within its bracket, although
// the second probe (far below capacity) is made to miss the SLO. The SLO is
// on p90, not p99: on a shared machine a single stall of the target's
// process is more than 1% of a short probe's requests.
func TestFindMaxLittlesLaw(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: about 25 s of load")
	}
	srv, err := httpbin.New(httpbin.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	const (
		conns    = 4
		delay    = 20 * time.Millisecond
		capacity = conns / 0.020
	)
	spec := &Spec{
		Paths:    []Path{{Name: "baseline", URL: "http://" + srv.Addr()}},
		Ladder:   Ladder{{Connections: conns, Threads: 1}},
		Payloads: Payloads{0}, Protocol: "http1", Endpoint: "/delay/20ms",
		Duration: Duration(time.Second), Warmup: Duration(200 * time.Millisecond), Timeout: Duration(2 * time.Second),
		Repeats: 1, Rates: Rates{50},
	}
	r := &Runner{Spec: spec, Dir: t.TempDir(), Build: func(_ context.Context, p Path, st Step) (loadgen.Config, protocol.Dialer, error) {
		var cfg loadgen.Config
		cfg.Target, cfg.Protocol = p.URL+spec.Endpoint, "http1"
		cfg.Connections, cfg.Threads = st.Rung.Connections, st.Rung.Threads
		cfg.Duration, cfg.Warmup, cfg.Timeout = results.Duration(spec.Duration), results.Duration(spec.Warmup), results.Duration(spec.Timeout)
		cfg.Rate = st.Rate
		d, err := http1.NewDialer(http1.Config{URL: cfg.Target})
		return cfg, d, err
	}}
	probes := 0
	r.runProbe = func(ctx context.Context, st Step, ev Event) *results.Step {
		res := r.runStep(ctx, st, ev)
		if probes++; probes == 2 && res.Run != nil {
			res.Run.Summary.Latency.P90 = results.Duration(time.Second) // the noise
		}
		return res
	}
	slo := func(run *results.Run) (bool, string) {
		if p90 := run.Summary.Latency.P90.D(); p90 >= 3*delay {
			return false, fmt.Sprintf("p90 %v is not < %v", p90, 3*delay)
		}
		return true, ""
	}
	maxes, err := r.FindMax(context.Background(), slo)
	if err != nil {
		t.Fatal(err)
	}
	m := maxes[0]
	for _, p := range m.Probes {
		t.Logf("probe %g/s #%d: ok %v %s", p.Rate, p.Attempt, p.OK, p.Why)
	}
	if m.Pass == nil || m.Fail == nil {
		t.Fatalf("no bracket: %+v", m)
	}
	if m.Probes[1].OK || m.Probes[1].Rate != 100 || m.Probes[2].Rate != 100 || !m.Probes[2].OK {
		t.Errorf("the noisy probe at 100/s was not repeated: %+v", m.Probes[:3])
	}
	// The bracket holds the capacity: nothing passes much above it (the
	// queue grows by 5% of the rate each second), and the noise did not
	// stop the search far below it.
	if m.Pass.Rate > 1.1*capacity || m.Fail.Rate < 0.75*capacity || m.Rate != m.Pass.Rate {
		t.Errorf("bracket [%g, %g) for a capacity of %g/s", m.Pass.Rate, m.Fail.Rate, capacity)
	}
	if m.Fail.Probes-m.Fail.Passed < agree {
		t.Errorf("the lowest failing rate rests on %+v", m.Fail)
	}
}

// probeRunner is a find-max Runner of one path at url+endpoint over one
// rung of conns connections, probes of d after a warm-up of warm.
func probeRunner(t *testing.T, url, endpoint string, conns int, start float64, d, warm time.Duration) *Runner {
	spec := &Spec{
		Paths:    []Path{{Name: "baseline", URL: url}},
		Ladder:   Ladder{{Connections: conns, Threads: 1}},
		Payloads: Payloads{0}, Protocol: "http1", Endpoint: endpoint,
		Duration: Duration(d), Warmup: Duration(warm), Timeout: Duration(2 * time.Second),
		Repeats: 1, Rates: Rates{start},
	}
	return &Runner{Spec: spec, Dir: t.TempDir(), Build: func(_ context.Context, p Path, st Step) (loadgen.Config, protocol.Dialer, error) {
		var cfg loadgen.Config
		cfg.Target, cfg.Protocol = p.URL+spec.Endpoint, "http1"
		cfg.Connections, cfg.Threads = st.Rung.Connections, st.Rung.Threads
		cfg.Duration, cfg.Warmup, cfg.Timeout = results.Duration(spec.Duration), results.Duration(spec.Warmup), results.Duration(spec.Timeout)
		cfg.Rate = st.Rate
		d, err := http1.NewDialer(http1.Config{URL: cfg.Target})
		return cfg, d, err
	}}
}

// p90Below is an SLO on p90: on a shared machine a single stall of the
// target's process is more than 1% of a short probe's requests.
func p90Below(limit time.Duration) SLO {
	return func(run *results.Run) (bool, string) {
		if p90 := run.Summary.Latency.P90.D(); p90 >= limit {
			return false, fmt.Sprintf("p90 %v is not < %v", p90, limit)
		}
		return true, ""
	}
}

// searchLog is a search's probes, one a line, with their flags.
func searchLog(m Max) string {
	var b strings.Builder
	for _, p := range m.Probes {
		fmt.Fprintf(&b, "  %g/s #%d: ok %v, p99 %v %s %s\n", p.Rate, p.Attempt, p.OK, p.P99.D(), p.Flags(), p.Why)
	}
	return b.String()
}

// A target whose p99 flaps around the SLO: an in-process HTTP server
// whose every answer waits 10 ms during one probe and 20 ms during the
// next, on a schedule of probes. Over 4 connections it serves at most
// 400/s in a fast probe and 200/s in a slow one (Little's law), so a rate
// between the two holds in one probe and misses in the next: the
// confirmations of a rate at the boundary disagree. The rate reported
// held in at least two of its (at most three) confirmations, never one
// of three, and no rate above the fast capacity is reported.
func TestFindMaxFlappingTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: about 15 s of load")
	}
	var delay atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(time.Duration(delay.Load()))
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	const (
		conns      = 4
		fast, slow = 10 * time.Millisecond, 20 * time.Millisecond
		capacity   = conns / 0.010 // in a fast probe
	)
	r := probeRunner(t, srv.URL, "/", conns, 75, 300*time.Millisecond, 100*time.Millisecond)
	probes := 0
	r.runProbe = func(ctx context.Context, st Step, ev Event) *results.Step {
		if probes++; probes%2 == 1 {
			delay.Store(int64(fast))
		} else {
			delay.Store(int64(slow))
		}
		return r.runStep(ctx, st, ev)
	}
	maxes, err := r.FindMax(context.Background(), p90Below(3*slow))
	if err != nil {
		t.Fatal(err)
	}
	m := maxes[0]
	log := searchLog(m)
	t.Logf("reported %g/s, highest held %+v, lowest failed %+v, probes:\n%s", m.Rate, m.Pass, m.Fail, log)
	if m.Pass == nil || !m.Pass.Confirmed() || m.Rate != m.Pass.Rate || m.Pass.Probes > confirmations {
		t.Fatalf("the rate reported is not confirmed: %g/s, highest held %+v\n%s", m.Rate, m.Pass, log)
	}
	// The verdict's probes are the last ones at that rate.
	var at []Probe
	for _, p := range m.Probes {
		if p.Rate == m.Rate {
			at = append(at, p)
		}
	}
	held := 0
	for _, p := range at[len(at)-m.Pass.Probes:] {
		if p.OK {
			held++
		}
	}
	if held < agree || held != m.Pass.Passed {
		t.Errorf("%g/s held in %d of its last %d probes, verdict %+v", m.Rate, held, m.Pass.Probes, m.Pass)
	}
	if m.Rate > 1.1*capacity {
		t.Errorf("reported %g/s, above the fast probes' capacity %g/s", m.Rate, capacity)
	}
	// The target did flap: some rate held in one probe and missed in another.
	outcomes := map[float64]map[bool]bool{}
	for _, p := range m.Probes {
		if outcomes[p.Rate] == nil {
			outcomes[p.Rate] = map[bool]bool{}
		}
		outcomes[p.Rate][p.OK] = true
	}
	flapped := false
	for _, o := range outcomes {
		flapped = flapped || (o[true] && o[false])
	}
	if !flapped {
		t.Errorf("no rate's probes disagreed: the target did not flap\n%s", log)
	}
}

// Three short searches in a row against the in-process httpbin target,
// bounded by its delay rather than by CPU (/delay/20ms over 32
// connections: 1600/s by Little's law, less what answering costs), agree
// within ±15% of their midpoint. Each search takes 15–25 probes of 0.35 s;
// on a 2-CPU machine other processes keep busy, about 20–45 s in all.
//
// A search during which the machine or the generator was saturated (M,
// G) says so: its figures measure contention for CPU, not the target.
// When searches that disagree measured contention, their agreement
// cannot be judged: not a pass. Outside CI that is a skip with the
// reason. Under CI, which must judge, the three searches run once more
// (a neighbouring package's load passes); if they still cannot be
// judged, the test fails with the reason. The test's own load is not the
// contention: it takes about a tenth of one CPU (2.4 CPU-seconds for 32 s).
func TestFindMaxSearchesAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: three searches, 20–45 s of load")
	}
	srv, err := httpbin.New(httpbin.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ci := os.Getenv("CI") != ""
	for try := 1; ; try++ {
		agree, contended, msg := findMaxThrice(t, "http://"+srv.Addr())
		switch {
		case agree:
			return
		case !contended:
			t.Fatal(msg)
		case !ci:
			t.Skip("cannot judge (not a pass): " + msg)
		case try == 2:
			t.Fatal("under CI, twice: " + msg)
		}
		t.Log("cannot judge, under CI: the three searches again")
	}
}

// findMaxThrice runs the three searches of TestFindMaxSearchesAgree:
// whether they agree, whether any measured contention, and why not when
// they do not agree.
func findMaxThrice(t *testing.T, url string) (agree, contention bool, why string) {
	const (
		delay = 20 * time.Millisecond
		conns = 32
		start = 250 // 250, 500, 1000: well below the capacity; 2000 well above
	)
	var found []float64
	var logs, contended []string
	for i := range 3 {
		began := time.Now()
		r := probeRunner(t, url, "/delay/"+delay.String(), conns, start, 250*time.Millisecond, 100*time.Millisecond)
		maxes, err := r.FindMax(context.Background(), p90Below(2*delay))
		if err != nil {
			t.Fatal(err)
		}
		m := maxes[0]
		found = append(found, m.Rate)
		saturated := ""
		if ms := m.Machine; ms != nil {
			saturated = fmt.Sprintf(", the machine saturated (M) during %d and loadgen (G) during %d, %s busy", ms.MachineSaturated, ms.GeneratorSaturated,
				fmt.Sprintf("%.0f–%.0f%%", 100*ms.UtilizationMin, 100*ms.UtilizationMax))
		}
		line := fmt.Sprintf("search %d: %g/s in %v, %d probes%s", i+1, m.Rate, time.Since(began).Round(100*time.Millisecond), len(m.Probes), saturated)
		t.Log(line)
		logs = append(logs, line+":\n"+searchLog(m))
		if m.MeasuresContention {
			var which []string
			for _, c := range m.Contended {
				which = append(which, fmt.Sprintf("%g/s #%d (%s)", c.Rate, c.Attempt, c.Flags))
			}
			contended = append(contended, fmt.Sprintf("search %d during %d of its %d probes: %s", i+1, len(m.Contended), len(m.Probes), strings.Join(which, ", ")))
		}
	}
	lo, hi := slices.Min(found), slices.Max(found)
	mid := (lo + hi) / 2
	t.Logf("found %v/s: within ±%.1f%% of %.0f/s", found, 100*(hi-lo)/(hi+lo), mid)
	busy := "the machine and the generator were not saturated during any probe"
	if len(contended) > 0 {
		busy = "the machine (M) or the generator (G) was saturated, so these searches measured contention for CPU, not only the target: " + strings.Join(contended, "; ")
		t.Log(busy)
	}
	if lo > 0 && (hi-lo)/(hi+lo) <= 0.15 {
		return true, len(contended) > 0, ""
	}
	return false, len(contended) > 0, fmt.Sprintf("three searches found %v/s: not within ±15%% of their midpoint %.0f/s; %s\n%s", found, mid, busy, strings.Join(logs, ""))
}

// A search stopped midway and resumed takes the probes saved whole as
// they were and runs only the rest: it makes the probes an uninterrupted
// search makes, and runs each once.
func TestFindMaxResumes(t *testing.T) {
	const capacity = 700.0
	fake := func(ctx context.Context, st Step, _ Event) *results.Step {
		p99 := time.Millisecond
		if st.Rate > capacity {
			p99 = time.Second
		}
		run := &results.Run{Schema: results.SchemaVersion, Tool: "loadgen", Interrupted: ctx.Err() != nil}
		run.Summary.Requests, run.Summary.Latency.P99, run.Summary.Latency.Count = 100, results.Duration(p99), 100
		return &results.Step{Schema: results.SchemaVersion, Tool: "loadgen", ID: st.ID(), Path: st.Path, Rung: st.Rung.String(),
			Payload: st.Payload, Rate: st.Rate, Repeat: st.Repeat, Run: run}
	}
	slo := func(run *results.Run) (bool, string) {
		return run.Summary.Latency.P99.D() < 10*time.Millisecond, "p99"
	}
	spec := func() *Spec {
		return &Spec{Paths: []Path{{Name: "baseline", URL: "http://127.0.0.1:1"}}, Ladder: Ladder{{Connections: 1, Threads: 1}},
			Payloads: Payloads{100}, Protocol: "http1", Duration: Duration(time.Second), Repeats: 1}
	}
	probesOf := func(m Max) []string {
		var ids []string
		for _, p := range m.Probes {
			ids = append(ids, p.ID)
		}
		return ids
	}
	whole := &Runner{Spec: spec(), Dir: t.TempDir(), runProbe: fake}
	want, err := whole.FindMax(context.Background(), slo)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	ran := 0
	first := &Runner{Spec: spec(), Dir: dir, runProbe: func(c context.Context, st Step, ev Event) *results.Step {
		if ran++; ran == 4 {
			cancel() // the fourth is interrupted
		}
		return fake(c, st, ev)
	}}
	first.FindMax(ctx, slo)
	ran = 0
	again := &Runner{Spec: spec(), Dir: dir, Resume: true, runProbe: func(c context.Context, st Step, ev Event) *results.Step {
		ran++
		return fake(c, st, ev)
	}}
	got, err := again.FindMax(context.Background(), slo)
	if err != nil {
		t.Fatal(err)
	}
	if g, w := probesOf(got[0]), probesOf(want[0]); strings.Join(g, " ") != strings.Join(w, " ") || got[0].Rate != want[0].Rate {
		t.Fatalf("resumed: %v, max %g; whole: %v, max %g", g, got[0].Rate, w, want[0].Rate)
	}
	if n := len(want[0].Probes); ran != n-3 {
		t.Errorf("resuming ran %d probes of %d; want all but the 3 saved whole", ran, n)
	}
}

// A findmax.json written before schema 3 (an array of searches, a
// latency as "1.2ms", the rate reported on one probe that held) still
// reads, as schema 2; this format reads back as it was written.
func TestReadFindMax(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.json")
	if err := os.WriteFile(old, []byte(`[{"path":"baseline","rung":"c50t2","payload":100,"max_rate":1850,"p99_at_max":"1.2ms",
		"highest_passing":{"rate":1850,"ok":true,"probes":3,"passed":1},"lowest_failing":{"rate":1900,"ok":false,"probes":2,"passed":0,"why":"p99"},
		"probes":[{"rate":1850,"attempt":1,"ok":false,"why":"p99","id":"baseline_c50t2_100B_r1850_r1"}],"machine_saturated_probes":4}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFindMax(old)
	if err != nil || f.Schema != 2 || len(f.Searches) != 1 {
		t.Fatalf("%+v, %v", f, err)
	}
	m := f.Searches[0]
	if m.Rate != 1850 || m.P99.D() != 1200*time.Microsecond || m.Pass.Passed != 1 || m.Pass.Probes != 3 || m.Pass.Confirmed() || m.Fail.Rate != 1900 ||
		len(m.Probes) != 1 || m.Probes[0].Rate != 1850 || !m.MeasuresContention || m.Machine.MachineSaturated != 4 {
		t.Errorf("read %+v", m)
	}
	want := FindMaxFile{Schema: results.SchemaVersion, Tool: "loadgen", SLO: "p99<1ms", Searches: []Max{{Path: "a", Rung: "c1t1", Payload: 100, Rate: 100,
		P99: Micros(1234567), Pass: &Verdict{Rate: 100, OK: true, Probes: 2, Passed: 2, Judged: 1}, Probes: []Probe{{Rate: 100, Attempt: 1, OK: true, ID: "x", P99: Micros(1500)}}}}}
	file := filepath.Join(dir, FindMaxFileName)
	if err := store.WriteJSON(file, want); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(file)
	if !strings.Contains(string(b), `"p99_at_max_us": 1234.567`) || !strings.Contains(string(b), `"max_rps": 100`) {
		t.Errorf("written:\n%s", b)
	}
	got, err := ReadFindMax(file)
	if err != nil || !reflect.DeepEqual(*got, want) {
		t.Errorf("read back %+v (%v), want %+v", got, err, want)
	}
}

// The plan's typical count of probes a search makes (what --dry-run's
// time estimate rests on) holds the searches of the simulated targets:
// a quiet climb, a quiet descent and a search through bursts of noise.
func TestFindMaxPlanTypicalProbes(t *testing.T) {
	plan := (&Spec{Paths: []Path{{Name: "a"}}, Ladder: Ladder{{Connections: 1, Threads: 1}}, Payloads: Payloads{100}}).FindMaxPlan()
	for _, tc := range []struct {
		name            string
		capacity, start float64
		noisyAt         map[float64]int
	}{
		{"quiet, climbing", 730, 100, nil},
		{"quiet, descending", 73, 1000, nil},
		{"bursts in the climb and the bisection", 37000, 100, map[float64]int{25600: 2, 19200: 2}},
		{"a burst over the start and its double", 1450, 100, map[float64]int{100: 2, 200: 2}},
	} {
		sim := &simulated{capacity: tc.capacity, noisy: map[int]bool{}, noisyAt: tc.noisyAt}
		if _, _, err := search(tc.start, sim.try); err != nil {
			t.Fatal(err)
		}
		if n := len(sim.probes); n < plan.ProbesLo || n > plan.ProbesHi {
			t.Errorf("%s: %d probes, outside the plan's typical %d–%d", tc.name, n, plan.ProbesLo, plan.ProbesHi)
		}
	}
}
