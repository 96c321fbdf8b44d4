//go:build !race

package http2

const raceEnabled = false
