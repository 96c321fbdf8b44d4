//go:build !linux

package loadgen

import (
	"errors"

	"loadgen/loadgen/protocol"
)

// loopSupported: the event loop needs Linux's epoll.
const loopSupported = false

func loopCount(Config) int { return 1 }

func newLoops(*engine, protocol.SessionDialer) (driver, error) {
	return nil, errors.New("the event loop needs Linux")
}
