package loadgen

import "loadgen/internal/heldp"

// WithoutHeldPs makes every loop started until restore wait the runtime's
// way, as when no P is left to spare, without taking Ps from the test.
func WithoutHeldPs() (restore func()) { return heldp.Refuse() }

// LoopPauses is how many times loops paused before a wait so far
// (coalesceFor).
func LoopPauses() int64 { return loopPauses.Load() }

// WithoutPauses makes every loop started until restore wait without the
// pause before a wait (coalesceFor), to compare with.
func WithoutPauses() (restore func()) {
	was := loopCoalesce
	loopCoalesce = 0
	return func() { loopCoalesce = was }
}
