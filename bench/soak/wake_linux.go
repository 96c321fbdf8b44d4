package main

import (
	"errors"
	"os"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// wakeCost is what one wake-up costs the woken thread on this machine, in
// CPU time charged to it (rusage): Timer, a thread that sleeps n times for
// every on a timer (an epoll wait with a timeout on an empty set, as an
// event loop sleeps between an open loop's sends); Thread, two threads on
// one CPU that wake each other n times through pipes (a wake-up with no
// timer and no interrupt). Both hold their threads; their waits are not
// raw system calls (a blocked one must let a collection stop the world),
// which adds the runtime's few tens of nanoseconds of entering a call to a
// wake-up's microseconds. Run pinned to one CPU.
type wakeCost struct{ Timer, Thread time.Duration }

func measureWake(n int, every time.Duration) (wakeCost, error) {
	var c wakeCost
	if n <= 0 || every <= 0 {
		return c, errors.New("wake: -n and -every must be more than 0")
	}
	t, err := timerWake(n, every)
	if err != nil {
		return c, err
	}
	p, err := threadWake(n)
	if err != nil {
		return c, err
	}
	return wakeCost{Timer: t, Thread: p}, nil
}

func threadCPU() time.Duration {
	var r unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_THREAD, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

func timerWake(n int, every time.Duration) (time.Duration, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return 0, os.NewSyscallError("epoll_create1", err)
	}
	defer unix.Close(ep)
	var ev [1]unix.EpollEvent
	ts := unix.NsecToTimespec(every.Nanoseconds())
	c0 := threadCPU()
	for range n {
		// A signal (the runtime's preemption, under load) ends a wait
		// early: that one is waited again, so each of the n is a timer's.
		for {
			// Syscall6, not RawSyscall6: a thread in a raw call holds its
			// P, so a collection's stop of the world signals it again and
			// again, each signal ending the wait to start it anew (in CI, a
			// 2 ms sleep cost 13.7 ms of CPU and 100 took 26 s).
			_, _, e := unix.Syscall6(unix.SYS_EPOLL_PWAIT2, uintptr(ep), uintptr(unsafe.Pointer(&ev[0])), 1, uintptr(unsafe.Pointer(&ts)), 0, 0)
			if e == unix.EINTR {
				continue
			}
			if e != 0 {
				return 0, os.NewSyscallError("epoll_pwait2", e)
			}
			break
		}
	}
	return (threadCPU() - c0) / time.Duration(n), nil
}

// threadWake measures n round trips between two threads. Each round trip is
// two wake-ups, one in each thread; the cost is the two threads' CPU over 2n.
func threadWake(n int) (time.Duration, error) {
	var a, b [2]int
	if err := unix.Pipe2(a[:], unix.O_CLOEXEC); err != nil {
		return 0, os.NewSyscallError("pipe2", err)
	}
	if err := unix.Pipe2(b[:], unix.O_CLOEXEC); err != nil {
		unix.Close(a[0])
		unix.Close(a[1])
		return 0, os.NewSyscallError("pipe2", err)
	}
	defer func() {
		for _, fd := range [...]int{a[0], a[1], b[0], b[1]} {
			unix.Close(fd)
		}
	}()
	// Both threads block in raw calls holding their Ps: two are needed.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0))))
	echoed := make(chan time.Duration, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		c0 := threadCPU()
		echo(b[1], a[0], n, false)
		echoed <- threadCPU() - c0
	}()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0 := threadCPU()
	err := echo(a[1], b[0], n, true)
	mine := threadCPU() - c0
	if err != nil {
		unix.Close(a[1]) // the echo's read ends
		<-echoed
		return 0, err
	}
	return (mine + <-echoed) / time.Duration(2*n), nil
}

// echo passes one byte n times: writes to w and reads from r, or the other
// way round when first is false.
func echo(w, r, n int, first bool) error {
	var buf [1]byte
	p := uintptr(unsafe.Pointer(&buf[0]))
	for i := range 2 * n {
		fd, nr := r, uintptr(unix.SYS_READ)
		if (i%2 == 0) == first {
			fd, nr = w, unix.SYS_WRITE
		}
		for {
			// Syscall, not RawSyscall: a thread blocked here lets go of
			// its P, so a collection's stop of the world does not wait
			// for a thread that waits for one the stop holds.
			m, _, e := unix.Syscall(nr, uintptr(fd), p, 1)
			if e == unix.EINTR {
				continue
			}
			if e != 0 {
				return os.NewSyscallError("pipe", e)
			}
			if m == 0 {
				return errors.New("wake: the other thread's pipe closed")
			}
			break
		}
	}
	return nil
}
