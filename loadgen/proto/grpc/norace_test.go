//go:build !race

package grpc

const raceEnabled = false
