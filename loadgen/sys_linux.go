package loadgen

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// The event loop's system calls on its non-blocking sockets never block,
// so they go in as raw system calls: without the runtime's bookkeeping
// for a call that might (entersyscall/exitsyscall), which costs as much as
// the call itself on loopback. The wait for events, which blocks, goes in
// raw too when the loop may keep its P: see waitEvents.

func rawRead(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

func rawWrite(fd int, p []byte) (int, error) {
	n, _, e := unix.RawSyscall(unix.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// waitEvents waits up to ms milliseconds (-1: until an event) for events
// as a raw system call, keeping the loop's P while it blocks.
//
// Through the runtime's bookkeeping (unix.EpollWait), a loop at one
// request in flight pays for its P at every wait: sysmon takes a P that
// has been in a system call for 20 µs and starts a thread to look for
// work elsewhere, and the loop wins a P back when the response arrives —
// futex calls and context switches per request that wrk does not make
// (measured at c1: 0.74-0.81 of wrk's requests per CPU-second with it,
// 0.96-1.00 without). Kept, the P is idle in the kernel's wait as wrk's
// thread is. Loops hold their Ps only while another P is left for the
// rest of the process (holdPs; the CLI gives a loop run one P more than
// its threads), and nothing stalls on a held P: sysmon preempts a
// goroutine after 10 ms on a P with a signal, which ends the wait with
// EINTR, and a stop of the world does the same. With ms 0 it returns what
// is ready now.
func waitEvents(epfd int, evs []unix.EpollEvent, ms int) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(unsafe.SliceData(evs))), uintptr(len(evs)), uintptr(ms), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
