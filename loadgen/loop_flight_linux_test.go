package loadgen

import (
	"math/rand/v2"
	"testing"
	"time"
)

// The flight list stays in deadline order whatever order requests join
// it in, so that expire and the wait, which look at its head only, never
// miss a deadline behind a later one; requests that join, leave and join
// again keep it so.
func TestFlightListByDeadline(t *testing.T) {
	base := time.Now()
	rng := rand.New(rand.NewPCG(1, 2))
	l := &loop{}
	conns := make([]*lconn, 200)
	for i := range conns {
		conns[i] = &lconn{index: int32(i)}
	}
	check := func(step string) {
		t.Helper()
		n := 0
		var prev *lconn
		for c := l.flightHead; c != nil; c = c.next {
			if c.prev != prev || !c.inList {
				t.Fatalf("%s: broken links at %d", step, c.index)
			}
			if prev != nil && c.deadline.Before(prev.deadline) {
				t.Fatalf("%s: deadline %v after %v", step, c.deadline.Sub(base), prev.deadline.Sub(base))
			}
			prev = c
			n++
		}
		if l.flightTail != prev {
			t.Fatalf("%s: tail is not the last", step)
		}
		in := 0
		for _, c := range conns {
			if c.inList {
				in++
			}
		}
		if n != in {
			t.Fatalf("%s: %d in the list, %d say so", step, n, in)
		}
	}
	for round := range 2000 {
		c := conns[rng.IntN(len(conns))]
		switch rng.IntN(3) {
		case 0:
			l.unflight(c)
		default:
			// Mostly later than all (sent now), sometimes earlier (a
			// clock that started at a slow connect), sometimes equal.
			d := time.Duration(round) * time.Millisecond
			switch rng.IntN(4) {
			case 0:
				d -= time.Duration(rng.IntN(1000)) * time.Millisecond
			case 1:
				d = time.Duration(rng.IntN(10)) * time.Millisecond
			}
			c.deadline = base.Add(d)
			l.flight(c)
		}
		check("round")
	}
	// Equal deadlines keep the order they came in.
	l = &loop{}
	for _, c := range conns[:3] {
		c.prev, c.next, c.inList = nil, nil, false
		c.deadline = base
		l.flight(c)
	}
	if l.flightHead != conns[0] || l.flightHead.next != conns[1] || l.flightTail != conns[2] {
		t.Error("equal deadlines out of the order they came in")
	}
}
