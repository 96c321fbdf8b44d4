package loadgen

import (
	"math/rand/v2"
	"time"
)

// Closed loop, a connection whose connect failed tries again after a
// backoff that doubles from minBackoff up to a cap. The cap grows with
// the run's connections so that a dead target costs the generator little
// (about conns / cap failed connects a second: at c10000, 10k a second)
// yet a recovered one is seen soon: at c1 within 50 ms. Each wait is drawn
// in [backoff/2, backoff], so that connections that failed together do not
// retry together: the first to retry after the target came back ends the
// outage the run records, not the last.
const (
	minBackoff    = 10 * time.Millisecond
	minBackoffCap = 50 * time.Millisecond
	maxBackoffCap = time.Second
)

// backoffPerConn is how much each connection adds to the cap (a variable
// for the tests that need a long backoff with few connections).
var backoffPerConn = 400 * time.Microsecond

// backoffCap is the longest wait between connects for a run of conns
// connections.
func backoffCap(conns int) time.Duration {
	return min(max(time.Duration(conns)*backoffPerConn, minBackoffCap), maxBackoffCap)
}

// nextBackoff is the backoff after one more failed connect; wait, how
// long to wait this time.
func (e *engine) nextBackoff(prev time.Duration) (next, wait time.Duration) {
	next = min(max(2*prev, minBackoff), e.backoffCap)
	return next, next/2 + rand.N(next/2+1)
}
