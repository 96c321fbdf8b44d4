//go:build race

package tcp_test

// The race detector allocates on its own account; allocation tests skip.
const raceEnabled = true
