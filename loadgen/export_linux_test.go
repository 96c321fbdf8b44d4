package loadgen

// WithoutHeldPs makes every loop started until restore wait the runtime's
// way, as when no P is left to spare, without taking Ps from the test.
func WithoutHeldPs() (restore func()) {
	const all = 1 << 20
	heldPs.Add(all)
	return func() { heldPs.Add(-all) }
}
