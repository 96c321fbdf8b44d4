// Package allocs counts heap allocations in tests as a whole, not per run:
// testing.AllocsPerRun divides the count by the runs as integers, so one
// allocation every other request reads as zero.
package allocs

import (
	"math"
	"runtime"
	"testing"
)

// Count runs f once to warm it up, then runs times on one P (as
// testing.AllocsPerRun does), and returns the allocations of all runs
// (the least of three counts: CountOnEveryP).
// The count is the process's: a goroutine that allocates meanwhile (an
// in-process server) counts too.
func Count(runs int, f func()) uint64 {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	return CountOnEveryP(runs, f)
}

// CountOnEveryP is Count without setting GOMAXPROCS to 1, for code that
// needs more than one P (an event loop that keeps its P while it waits).
//
// It counts the runs three times and returns the least count. The count
// is the process's, so another goroutine's allocations land in it too (an
// earlier test's server closing a connection late on a loaded machine: 28
// in 1,000 requests once); those come and go, while what f allocates by
// design is in every count.
func CountOnEveryP(runs int, f func()) uint64 {
	f()
	least := uint64(math.MaxUint64)
	for range counts {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			f()
		}
		runtime.ReadMemStats(&after)
		least = min(least, after.Mallocs-before.Mallocs)
	}
	return least
}

// counts is how many times CountOnEveryP counts the runs.
const counts = 3

// Zero fails t unless runs of f allocate at most budget times in all: zero
// per run, with budget for what the runtime or a test's own peer allocates
// now and then (a constant for the whole count, never one per run).
func Zero(t testing.TB, what string, runs int, budget uint64, f func()) {
	t.Helper()
	if n := Count(runs, f); n > budget {
		t.Errorf("%s: %d allocations in %d runs (%.3f a run), want at most %d in all", what, n, runs, float64(n)/float64(runs), budget)
	}
}

// Slack is what a whole count may hold beyond what the code under test
// allocates by design: the runtime's own and an in-process test peer's,
// now and then (3 in 100 requests of 1 MiB seen here). A constant for the
// whole count, so one allocation every other run — 50 in a count of 100,
// 1,000 in one of 2,000 — never passes.
const Slack = 8

// TLSReads is what crypto/tls allocates for n reads of a record beyond one
// each (an atLeastReader per read, tls.Conn.readFromUntil): its buffer
// pools, refilled after a collection, about one read in a hundred here;
// the loop's own tests allow n/50 the same way.
func TLSReads(n uint64) uint64 { return n + n/50 }
