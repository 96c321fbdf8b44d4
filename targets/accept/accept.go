// Package accept is the accept loop of loadgen's raw-socket targets: it
// hands every connection to the server and rides out temporary failures
// (out of file descriptors and the like) by backing off, as net/http does.
package accept

import (
	"errors"
	"net"
	"time"
)

// Loop accepts connections from ln and passes each to serve until ln is
// closed or done is closed. serve must not block: it starts the
// connection's goroutine (or closes the connection).
func Loop(ln net.Listener, done <-chan struct{}, serve func(net.Conn)) {
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			select {
			case <-done:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			t := time.NewTimer(backoff)
			select {
			case <-done:
				t.Stop()
				return
			case <-t.C:
			}
			continue
		}
		backoff = 0
		serve(c)
	}
}
