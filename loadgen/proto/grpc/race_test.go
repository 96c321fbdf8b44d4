//go:build race

package grpc

// raceEnabled: the race detector allocates, so allocation tests are skipped.
const raceEnabled = true
