//go:build !linux

package loadgen

// WithoutHeldPs does nothing: loops run on Linux only.
func WithoutHeldPs() (restore func()) { return func() {} }
