//go:build !linux

package loadgen

// WithoutHeldPs: loops run on Linux only.
func WithoutHeldPs() (restore func()) { return func() {} }
