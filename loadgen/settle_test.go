package loadgen

import (
	"testing"
	"time"

	"loadgen/internal/race"

	"loadgen/loadgen/pace"
	"loadgen/loadgen/protocol"
	"loadgen/results"
	"loadgen/results/hist"
)

// The engine's rules, one row each: a request's times and outcome in,
// what settle records and its verdict on the connection out. Both drivers
// call settle; their own tests (forDrivers) run the rules end to end.
func TestSettleRules(t *testing.T) {
	const timeout = 10 * time.Millisecond
	ms := time.Millisecond
	measure := time.Unix(1_800_000_000, 0) // the measured window begins
	type effects struct {
		in          string            // the histogram it counts in: succeeded, failed or warm-up
		latency     time.Duration     // at what
		uncorrected time.Duration     // open loop, measured: from its (last) send
		err         protocol.ErrClass // the class counted, None for none
		answered    bool              // an answer (Req/Sec; the warm-up's answered)
		lag         time.Duration     // open loop, measured: its paced lag; -1 none
		late        bool
		mix         bool // counted in its name's statistics
		drop        bool // its connection is dropped
	}
	// Times are from the measured window's start; the deadline is the
	// last try's start (sent) + timeout.
	for _, tc := range []struct {
		name                        string
		open, newConn               bool
		intended, first, sent, done time.Duration
		o                           protocol.Outcome
		pick                        int32 // -1: no mix
		want                        effects
	}{
		{name: "closed loop: an answer counts from its send",
			sent: 1 * ms, done: 3 * ms, o: protocol.Outcome{Status: 200}, pick: -1,
			want: effects{in: "succeeded", latency: 2 * ms, answered: true, lag: -1}},
		{name: "closed loop: an error status is an answer",
			sent: 1 * ms, done: 4 * ms, o: protocol.Outcome{Status: 503, Err: protocol.Status}, pick: -1,
			want: effects{in: "succeeded", latency: 3 * ms, err: protocol.Status, answered: true, lag: -1}},
		{name: "hard bound: an answer after the deadline is a timeout counted at it, its connection clean",
			sent: 1 * ms, done: 1*ms + timeout + 5*ms, o: protocol.Outcome{Status: 200}, pick: -1,
			want: effects{in: "failed", latency: timeout, err: protocol.Timeout, lag: -1}},
		{name: "hard bound: a timeout whose timer fired late counts at the deadline",
			sent: 1 * ms, done: 1*ms + timeout + 3*ms, o: protocol.Outcome{Err: protocol.Timeout, Done: true}, pick: -1,
			want: effects{in: "failed", latency: timeout, err: protocol.Timeout, lag: -1, drop: true}},
		{name: "a timeout before the deadline counts when it came",
			sent: 1 * ms, done: 5 * ms, o: protocol.Outcome{Err: protocol.Timeout}, pick: -1,
			want: effects{in: "failed", latency: 4 * ms, err: protocol.Timeout, lag: -1, drop: true}},
		{name: "a failure leaves its connection in an unknown state",
			sent: 1 * ms, done: 2 * ms, o: protocol.Outcome{Err: protocol.Read}, pick: -1,
			want: effects{in: "failed", latency: 1 * ms, err: protocol.Read, lag: -1, drop: true}},
		{name: "a failure after the deadline keeps its class and time",
			sent: 1 * ms, done: 1*ms + timeout + 2*ms, o: protocol.Outcome{Err: protocol.Read}, pick: -1,
			want: effects{in: "failed", latency: timeout + 2*ms, err: protocol.Read, lag: -1, drop: true}},
		{name: "an answer that ends its connection drops it",
			sent: 1 * ms, done: 2 * ms, o: protocol.Outcome{Status: 200, Done: true}, pick: -1,
			want: effects{in: "succeeded", latency: 1 * ms, answered: true, lag: -1, drop: true}},
		{name: "a connection per request is dropped after it",
			newConn: true, sent: 1 * ms, done: 2 * ms, o: protocol.Outcome{Status: 200}, pick: -1,
			want: effects{in: "succeeded", latency: 1 * ms, answered: true, lag: -1, drop: true}},
		{name: "open loop: latency from the intended start, uncorrected from the send, late",
			open: true, intended: 0, first: 3 * ms, sent: 3 * ms, done: 5 * ms, o: protocol.Outcome{Status: 200}, pick: -1,
			want: effects{in: "succeeded", latency: 5 * ms, uncorrected: 2 * ms, answered: true, lag: 3 * ms, late: true}},
		{name: "open loop: a lag within LateAfter is not late",
			open: true, intended: 1 * ms, first: 1*ms + results.LateAfter/2, sent: 1*ms + results.LateAfter/2, done: 4 * ms,
			o: protocol.Outcome{Status: 200}, pick: -1,
			want: effects{in: "succeeded", latency: 3 * ms, uncorrected: 3*ms - results.LateAfter/2, answered: true, lag: results.LateAfter / 2}},
		{name: "open loop resend: the lag is its first try's, the uncorrected latency from its last",
			open: true, intended: 0, first: ms / 2, sent: 4 * ms, done: 6 * ms, o: protocol.Outcome{Status: 200}, pick: -1,
			want: effects{in: "succeeded", latency: 6 * ms, uncorrected: 2 * ms, answered: true, lag: ms / 2}},
		{name: "open loop hard bound: a late answer counts at the deadline from the intended start",
			open: true, intended: 0, first: 2 * ms, sent: 2 * ms, done: 2*ms + timeout + 7*ms, o: protocol.Outcome{Status: 200}, pick: -1,
			want: effects{in: "failed", latency: 2*ms + timeout, uncorrected: timeout, err: protocol.Timeout, lag: 2 * ms, late: true}},
		{name: "open loop: a failed connect of its own fails the request, lag from the connect",
			open: true, newConn: true, intended: 0, first: 2 * ms, sent: 2 * ms, done: 4 * ms, o: protocol.Outcome{Err: protocol.Connect}, pick: -1,
			want: effects{in: "failed", latency: 4 * ms, uncorrected: 2 * ms, err: protocol.Connect, lag: 2 * ms, late: true, drop: true}},
		{name: "warm-up: intended before the window, it counts in the warm-up only",
			open: true, intended: -1 * ms, first: 0, sent: 0, done: 2 * ms, o: protocol.Outcome{Status: 200}, pick: 1,
			want: effects{in: "warm-up", latency: 3 * ms, answered: true, lag: -1}},
		{name: "warm-up edge: intended at the window's start is measured",
			open: true, intended: 0, first: 0, sent: 0, done: 1 * ms, o: protocol.Outcome{Status: 200}, pick: -1,
			want: effects{in: "succeeded", latency: 1 * ms, uncorrected: 1 * ms, answered: true, lag: 0}},
		{name: "warm-up: a failure counts in the warm-up's errors",
			sent: -3 * ms, done: -1 * ms, o: protocol.Outcome{Err: protocol.Read}, pick: -1,
			want: effects{in: "warm-up", latency: 2 * ms, err: protocol.Read, lag: -1, drop: true}},
		{name: "closed loop: the window is judged by the send, not a stale intended start",
			intended: -5 * ms, sent: 0, done: 1 * ms, o: protocol.Outcome{Status: 200}, pick: -1,
			want: effects{in: "succeeded", latency: 1 * ms, answered: true, lag: -1}},
		{name: "a request of a mix counts in its name's statistics",
			sent: 1 * ms, done: 3 * ms, o: protocol.Outcome{Status: 200}, pick: 1,
			want: effects{in: "succeeded", latency: 2 * ms, answered: true, lag: -1, mix: true}},
		{name: "a failed request of a mix counts in its name's errors",
			sent: 1 * ms, done: 1*ms + timeout + 1*ms, o: protocol.Outcome{Err: protocol.Timeout}, pick: 2,
			want: effects{in: "failed", latency: timeout, err: protocol.Timeout, lag: -1, mix: true, drop: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &engine{measure: measure}
			if tc.open {
				e.pacer = pace.Constant{PerSec: 1000}
			}
			sh := newShard(tc.open, true)
			sh.wuLatency = hist.New() // a run with a warm-up
			if tc.pick >= 0 {
				m, err := newMix(&Mix{Weights: []int{1, 1, 1}, Names: []string{"a", "b", "c"}}, []*shard{sh}, &pickConn{}, nil, 1)
				if err != nil {
					t.Fatal(err)
				}
				e.mix = m
			}
			at := measure.Add
			r := request{intended: at(tc.intended), first: at(tc.first), sent: at(tc.sent), deadline: at(tc.sent + timeout), pick: tc.pick}
			o := tc.o
			var n counter
			drop := e.settle(sh, &n, &r, &o, at(tc.done), tc.newConn)
			w := tc.want

			hists := map[string]*hist.Histogram{"succeeded": sh.succeeded, "failed": sh.failed, "warm-up": sh.wuLatency}
			for name, h := range hists {
				want := int64(0)
				if name == w.in {
					want = 1
				}
				if h.Count() != want {
					t.Errorf("%s histogram: %d counted, want %d", name, h.Count(), want)
				}
			}
			if h := hists[w.in]; h.Count() == 1 && !near(h.Max(), w.latency) {
				t.Errorf("%s at %v, want %v", w.in, h.Max(), w.latency)
			}
			measured := w.in != "warm-up"
			if got := sh.ivLatency.Count(); got != b2i(measured) {
				t.Errorf("the interval's histogram counted %d, want %d", got, b2i(measured))
			}
			if tc.open {
				if got := sh.uncorrected.Count(); got != b2i(measured) {
					t.Errorf("uncorrected: %d counted, want %d", got, b2i(measured))
				} else if measured && !near(sh.uncorrected.Max(), w.uncorrected) {
					t.Errorf("uncorrected at %v, want %v", sh.uncorrected.Max(), w.uncorrected)
				}
			}

			errs, answered := sh.errs, n.n.Load()
			if !measured {
				errs, answered = sh.wu.errs, sh.wu.answered
			}
			for c := protocol.ErrClass(0); c < protocol.NumErrClasses; c++ {
				if want := b2i(c == w.err && c != protocol.None); errs[c] != want {
					t.Errorf("errors of class %v: %d, want %d", c, errs[c], want)
				}
			}
			if answered != b2i(w.answered) {
				t.Errorf("%d answered, want %d", answered, b2i(w.answered))
			}
			if measured && w.answered && sh.status[tc.o.Status] != 1 {
				t.Errorf("status %d counted %d times, want 1", tc.o.Status, sh.status[tc.o.Status])
			}
			if measured && (o.Err == protocol.None || o.Err == protocol.Status) != w.answered {
				t.Errorf("outcome says %v after settle, answered %v", o.Err, w.answered)
			}

			if w.lag < 0 {
				if sh.sent != 0 {
					t.Errorf("%d paced sends counted, want none", sh.sent)
				}
			} else if sh.sent != 1 || sh.maxLag != w.lag || sh.late != b2i(w.late) {
				t.Errorf("paced: %d sent, lag %v, %d late; want 1, %v, %d", sh.sent, sh.maxLag, sh.late, w.lag, b2i(w.late))
			}

			if e.mix != nil {
				var lat, ans, errs int64 // of its name's statistics
				for k := range e.mix.stats {
					st := &e.mix.stats[k]
					if int(e.mix.nameOf[tc.pick]) != k/e.mix.copies {
						if st.latency.Count() != 0 {
							t.Errorf("counted in the statistics of %s, not its own", e.mix.names[k/e.mix.copies])
						}
						continue
					}
					lat, ans, errs = lat+st.latency.Count(), ans+st.answered, errs+st.errs[w.err]
				}
				if lat != b2i(w.mix) || ans != b2i(w.mix && w.answered) || errs != b2i(w.mix) {
					t.Errorf("its name's statistics: %d counted, %d answered, %d of class %v; want %d, %d, %d",
						lat, ans, errs, w.err, b2i(w.mix), b2i(w.mix && w.answered), b2i(w.mix))
				}
			}

			if drop != w.drop {
				t.Errorf("drop the connection: %v, want %v", drop, w.drop)
			}
		})
	}
}

// A request's lag is its first try's, its latency without the correction
// runs from its last.
func TestRequestTry(t *testing.T) {
	base := time.Unix(1_800_000_000, 0)
	r := request{intended: base}
	r.try(base.Add(time.Millisecond))
	r.try(base.Add(5 * time.Millisecond)) // sent again
	if r.first != base.Add(time.Millisecond) || r.sent != base.Add(5*time.Millisecond) {
		t.Errorf("first try at +%v, last at +%v; want +1ms, +5ms", r.first.Sub(base), r.sent.Sub(base))
	}
}

// near says a histogram's reading of want is want: they keep 3
// significant digits.
func near(got, want time.Duration) bool {
	d := got - want
	return d >= -want/500 && d <= want/500
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// settle allocates nothing, on any of its branches (the drivers'
// allocation tests cover it on their paths).
func TestSettleAllocatesNothing(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are measured without -race (make test)")
	}
	base := time.Unix(1_800_000_000, 0)
	e := &engine{measure: base, pacer: pace.Constant{PerSec: 1000}}
	sh := newShard(true, true)
	sh.wuLatency = hist.New()
	var err error
	if e.mix, err = newMix(&Mix{Weights: []int{1, 1}, Names: []string{"a", "b"}}, []*shard{sh}, &pickConn{}, nil, 1); err != nil {
		t.Fatal(err)
	}
	var n counter
	outcomes := []protocol.Outcome{{Status: 200}, {Status: 503, Err: protocol.Status}, {Err: protocol.Read}, {Err: protocol.Timeout}}
	i := 0
	got := testing.AllocsPerRun(1000, func() {
		intended := base.Add(time.Duration(i%3-1) * time.Millisecond) // before, at, after the window's start
		r := request{intended: intended, first: intended, sent: intended, deadline: intended.Add(time.Millisecond), pick: int32(i % 2)}
		o := outcomes[i%len(outcomes)]
		e.settle(sh, &n, &r, &o, intended.Add(time.Duration(i%4)*time.Millisecond/2), i%5 == 0)
		i++
	})
	if got != 0 {
		t.Errorf("%v allocations per settle, want 0", got)
	}
	if sh.succeeded.Count() == 0 || sh.failed.Count() == 0 || sh.wuLatency.Count() == 0 {
		t.Errorf("a branch was not taken: %d succeeded, %d failed, %d in the warm-up", sh.succeeded.Count(), sh.failed.Count(), sh.wuLatency.Count())
	}
}
