//go:build race

package http2

// The race detector allocates: allocation counts are not checked under it.
const raceEnabled = true
