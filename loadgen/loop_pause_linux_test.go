package loadgen

import "testing"

// The pause rule follows what the loop's wake-ups take: it waits until
// waits were measured, then pauses while pauses take more answers than
// waits (h2c streams: 9 against 1), stops where they take fewer (a
// grpc-go server's bursts: 2.3 against 4.7) and never pauses where a wait
// takes many; one idle turn in coalesceCheck goes against the rule, so a
// change is seen.
func TestYieldsPays(t *testing.T) {
	// idle runs n idle turns of a loop whose pauses end perPause requests
	// each and whose waits perWait, and counts the turns that paused.
	idle := func(y *yields, ends *int, n, perPause, perWait int) (paused int) {
		for range n {
			y.tally(*ends)
			if y.pays() {
				y.start(byPause, *ends)
				*ends += perPause
				paused++
			} else {
				y.start(byWait, *ends)
				*ends += perWait
			}
		}
		return paused
	}
	var y yields
	ends := 0
	if y.pays() {
		t.Fatal("paused before any wait was measured")
	}
	y.start(byWait, ends)
	ends++
	if n := idle(&y, &ends, 1000, 9, 1); n < 1000-1000/coalesceCheck-2 || n == 1000 {
		t.Errorf("pauses taking 9, waits 1: %d of 1000 turns paused, want all but one in %d", n, coalesceCheck)
	}
	// The server changes: now a wait takes more than a pause. Waits are
	// measured one turn in coalesceCheck while the loop pauses: the rule
	// turns after a few of them.
	idle(&y, &ends, 5*coalesceCheck, 2, 5)
	if n := idle(&y, &ends, 1000, 2, 5); n < 1000/coalesceCheck-2 || n > 1000/coalesceCheck+2 {
		t.Errorf("pauses taking 2, waits 5: %d of 1000 turns paused, want one in %d", n, coalesceCheck)
	}
	// Dense answers: no pause at all, whatever a pause would take (from
	// pausing, it takes a few dozen waits measured to see it).
	idle(&y, &ends, 30*coalesceCheck, 40, 2*coalesceFew)
	if n := idle(&y, &ends, 1000, 40, 2*coalesceFew); n != 0 {
		t.Errorf("waits taking %d: %d of 1000 turns paused, want none", 2*coalesceFew, n)
	}
}
