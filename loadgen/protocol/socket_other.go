//go:build !linux

package protocol

import (
	"errors"
	"runtime"
)

var errNoLoop = errors.New("an event loop's sockets are Linux's (here: " + runtime.GOOS + "): use --driver goroutines")

// Socket fails: off Linux no event loop drives a Session, and connections
// are dialled (Dial) instead.
func (t *Target) Socket() (int, error) { return -1, errNoLoop }

// SocketError fails as Socket does.
func SocketError(fd int) error { return errNoLoop }
