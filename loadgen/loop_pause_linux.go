package loadgen

import (
	"sync/atomic"
	"time"
)

// The closed loop's pause: a loop over multiplexed connections with many
// requests in flight may pause before it waits, while its pauses take more
// answers than its waits.

// coalesceFor is how long a closed loop over multiplexed connections
// pauses before it waits for answers, and coalesceMin how many requests
// it must have in flight to pause: a wake-up by an answer costs the loop
// more than the requests it brings (16-17 µs of CPU on a VM, measured in
// docs/benchmarks.md), and a server with that many to answer keeps busy through
// the pause. The answers that came during it are read after it, each
// timed by the kernel's receive timestamp (SO_TIMESTAMPNS) of the read's
// last bytes: the pause moves no latency by more than the spread of the
// arrivals one read takes.
const (
	coalesceFor   = 50 * time.Microsecond
	coalesceMin   = 32
	coalesceFew   = 8
	coalesceCheck = 64
)

// loopCoalesce is the pause of the loops started from now (coalesceFor;
// 0 in tests that compare with loops that never pause).
var loopCoalesce = coalesceFor

// loopPauses counts the pauses of every loop (tests).
var loopPauses atomic.Int64

// pausable tells whether the loop pauses before its wait (see
// coalesceFor): enough requests in flight, every event of its last wait
// taken, and its wake-ups saying a pause pays (yields.pays).
func (l *loop) pausable() bool {
	if l.coalesce == 0 || l.inFlight < coalesceMin || l.full {
		return false
	}
	return l.yields.pays()
}

// yields is what a loop's idle turns take, to judge whether its pauses
// pay: for the turns that paused and for those that waited, how many
// requests ended from each until the loop had nothing to read again, as
// moving averages (the latest weighs 1/8). A pause costs about what a
// wake-up by an answer costs (a timer's wake-up against another CPU's, on
// a VM 16 µs each): it pays when it takes more answers than a wait does.
// Against h2c streams a pause took 9 answers where a wait took 1, against
// a grpc-go server's unary calls 2.3 where a wait took 4.7 (its answers
// come in bursts, and a wait for the next burst takes more than a pause
// that ends between two).
type yields struct {
	by            int8 // what the last idle turn did: byPause, byWait, 0 (neither, or found answers ready)
	from          int  // requests ended by then
	pause, wait   float64
	pauses, waits int // turns measured of each
	turn          int // idle turns since the last one against the rule
}

const (
	byPause = 1
	byWait  = 2
)

// start notes what this idle turn does, with the requests ended so far.
func (y *yields) start(by int8, ends int) { y.by, y.from = by, ends }

// tally ends the last idle turn's measure: ends requests ended by now.
func (y *yields) tally(ends int) {
	n := float64(ends - y.from)
	switch y.by {
	case byPause:
		y.pause = movingAvg(y.pause, n, y.pauses)
		y.pauses++
	case byWait:
		y.wait = movingAvg(y.wait, n, y.waits)
		y.waits++
	}
	y.by = 0
}

func movingAvg(avg, n float64, count int) float64 {
	if count == 0 {
		return n
	}
	return avg + (n-avg)/8
}

// pays tells whether this idle turn pauses. Not before waits were
// measured; not where a wait takes coalesceFew answers or more (they come
// densely: a wait takes them without sleeping, and a pause would only add
// a sleep); else when pauses take more than waits or were not tried yet.
// One idle turn in coalesceCheck goes against that, to see whether it
// still holds.
func (y *yields) pays() bool {
	if y.waits == 0 || y.wait >= coalesceFew {
		return false
	}
	p := y.pauses == 0 || y.pause > y.wait
	if y.turn++; y.turn >= coalesceCheck {
		y.turn = 0
		return !p
	}
	return p
}

// pauseFor is the pause before a wait of d (< 0: unbounded).
func pauseFor(d, pause time.Duration) time.Duration {
	if d > 0 && d < pause {
		return d
	}
	return pause
}
