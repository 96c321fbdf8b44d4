//go:build !linux

package loadgen

import "time"

// waiter sleeps a worker until a request's intended start (portable
// version: Go timers, up to a millisecond late when the process is idle).
type waiter struct{ stop chan struct{} }

func newWaiter() (*waiter, error) { return &waiter{stop: make(chan struct{})}, nil }

func (w *waiter) sleep(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-w.stop:
		return false
	}
}

func (w *waiter) interrupt() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
}

func (w *waiter) close() {}
