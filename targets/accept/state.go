package accept

import (
	"errors"
	"fmt"
	"net"
)

// State is what every target keeps about its listener: it starts once,
// never after Close, and reports the real address once listening. The
// server's own mutex guards it: call its methods with that lock held.
type State struct {
	Ln      net.Listener // nil until Listen
	Started bool
	Closed  bool
}

// Listen opens addr on TCP for the server called name, unless it already
// started or was closed.
func (s *State) Listen(name, addr string) (net.Listener, error) {
	switch {
	case s.Closed:
		return nil, fmt.Errorf("%s: server is closed", name)
	case s.Started:
		return nil, fmt.Errorf("%s: server already started", name)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	s.Ln, s.Started = ln, true
	return ln, nil
}

// Close marks the server closed and closes its listener, if any; already
// is true when it was closed before (then nothing is done). A listener
// already closed is not an error.
func (s *State) Close() (already bool, err error) {
	if s.Closed {
		return true, nil
	}
	s.Closed = true
	if s.Ln != nil {
		if err = s.Ln.Close(); errors.Is(err, net.ErrClosed) {
			err = nil
		}
	}
	return false, err
}

// Addr is the address listened on (the real port when the configured one
// was 0), or the configured address before Listen.
func (s *State) Addr(configured string) string {
	if s.Ln != nil {
		return s.Ln.Addr().String()
	}
	return configured
}
