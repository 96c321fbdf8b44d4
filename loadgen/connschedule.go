package loadgen

import (
	"math"
	"time"

	"loadgen/loadgen/pace"
)

// scheduled waits until the connection schedule counts the worker's
// connection among those that send; false when it never will again, or
// the run stops.
func (w *worker) scheduled() bool {
	s := w.e.cfg.ConnSchedule
	for {
		at := time.Since(w.e.start)
		if active(s, at) > w.index {
			return true
		}
		next, ok := activeFrom(s, w.index, at)
		if !ok || !w.waitBackoff(next-at) {
			return false
		}
	}
}

// active is how many connections the schedule counts at an offset: its
// level, rounded down; none after its end.
func active(s *pace.Stages, at time.Duration) int {
	if at >= s.Total() {
		return 0
	}
	return int(math.Floor(s.Rate(at) + 1e-9))
}

// activeFrom is the first offset from at when the schedule counts more
// than index connections; false when it never does again.
func activeFrom(s *pace.Stages, index int, at time.Duration) (time.Duration, bool) {
	need := float64(index + 1)
	list := s.List()
	for k := s.StageAt(at); k < len(list); k++ {
		st, from := list[k], max(at, s.StartOf(k))
		if from >= s.StartOf(k)+st.Over {
			continue
		}
		if s.Rate(from) >= need-1e-9 {
			return from, true
		}
		if st.To > st.From && st.To >= need {
			// The floor is reached just past the exact time; at the
			// stage's end, the next stage's start says.
			t := s.StartOf(k) + time.Duration((need-st.From)/(st.To-st.From)*float64(st.Over)) + time.Microsecond
			if end := s.StartOf(k) + st.Over; t < end {
				return max(t, from), true
			}
		}
	}
	return 0, false
}
