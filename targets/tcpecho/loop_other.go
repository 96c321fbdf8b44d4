//go:build !linux

package tcpecho

import (
	"errors"
	"net"
)

// loopSupported is false: only Linux has the event loops.
const loopSupported = false

type loops struct{ kept bool }

func startLoops(*Server, net.Listener) (*loops, error) {
	return nil, errors.New("event loops need Linux")
}

func (*loops) close() error { return nil }
