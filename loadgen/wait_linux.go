package loadgen

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// waiter sleeps a worker until a request's intended start. Go's timers wake
// up to a millisecond late when the process is idle (the netpoller waits in
// whole milliseconds), which an open loop would add to every latency. A
// timerfd in the netpoller fires within microseconds and burns no CPU while
// waiting: one per worker, armed only when the worker is early.
type waiter struct {
	fd   int
	f    *os.File
	spec unix.ItimerSpec
	buf  [8]byte
}

func newWaiter() (*waiter, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("timerfd_create", err)
	}
	// A non-blocking fd makes the *os.File pollable: Read parks the
	// goroutine in the netpoller instead of blocking a thread.
	return &waiter{fd: fd, f: os.NewFile(uintptr(fd), "timerfd")}, nil
}

// sleep waits d. It returns false when interrupted.
func (w *waiter) sleep(d time.Duration) bool {
	if d <= 0 {
		return true
	}
	w.spec.Value = unix.NsecToTimespec(int64(d))
	if err := unix.TimerfdSettime(w.fd, 0, &w.spec, nil); err != nil {
		time.Sleep(d)
		return true
	}
	_, err := w.f.Read(w.buf[:])
	return err == nil
}

// interrupt makes the current and every later sleep return false at once.
// It may be called from any goroutine.
func (w *waiter) interrupt() { _ = w.f.SetReadDeadline(time.Unix(1, 0)) }

func (w *waiter) close() { _ = w.f.Close() }
