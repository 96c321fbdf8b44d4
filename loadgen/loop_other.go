//go:build !linux

package loadgen

import (
	"errors"
)

// loopSupported is false: the event loop needs Linux's epoll.
const loopSupported = false

func loopCount(Config) int { return 1 }

func newLoops(*engine, loopDialer) (driver, error) {
	return nil, errors.New("the event loop needs Linux")
}
