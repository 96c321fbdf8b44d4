//go:build !race

package httpbin

const raceEnabled = false
