package loadgen

import (
	"testing"
	"time"

	"loadgen/loadgen/pace"
)

// A connection schedule counts its level rounded down, and a parked
// connection wakes when the level first reaches it.
func TestConnSchedule(t *testing.T) {
	p, err := pace.Parse("2/1s,2-6/2s,6-0/2s")
	if err != nil {
		t.Fatal(err)
	}
	s := p.(*pace.Stages)
	for at, want := range map[time.Duration]int{0: 2, 999 * time.Millisecond: 2, 1500 * time.Millisecond: 3, 2 * time.Second: 4, 3 * time.Second: 6, 4 * time.Second: 3, 4999 * time.Millisecond: 0, 5 * time.Second: 0, time.Hour: 0} {
		if got := active(s, at); got != want {
			t.Errorf("active(%v) = %d, want %d", at, got, want)
		}
	}
	for _, tc := range []struct {
		index int
		at    time.Duration
		want  time.Duration
		ok    bool
	}{
		{0, 0, 0, true}, // active from the start
		{2, 0, 1500*time.Millisecond + time.Microsecond, true}, // the third: 2 → 6 over 2 s reaches 3 at 1.5 s
		{5, 0, 3 * time.Second, true},                          // the sixth at the ramp's top, where the next stage starts
		{5, 3500 * time.Millisecond, 0, false},                 // past it, the level only falls
		{6, 0, 0, false},                                       // never 7
	} {
		got, ok := activeFrom(s, tc.index, tc.at)
		if ok != tc.ok || (ok && (got < tc.want-time.Microsecond || got > tc.want+time.Microsecond)) {
			t.Errorf("activeFrom(%d, %v) = %v %v, want %v %v", tc.index, tc.at, got, ok, tc.want, tc.ok)
		}
		if ok && active(s, got) <= tc.index {
			t.Errorf("activeFrom(%d, %v) = %v, where only %d are active", tc.index, tc.at, got, active(s, got))
		}
	}
}
