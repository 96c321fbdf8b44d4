package loadgen

import (
	"os"

	"golang.org/x/sys/unix"
)

// The loop's epoll sets and what each socket is watched for (the loop's
// own set: loop_linux.go, watch).

// newSleepSet makes the set a loop sleeps on between sends: its eventfd
// alone.
func newSleepSet(wake int) (int, error) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return -1, os.NewSyscallError("epoll_create1", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wake), Pad: evWake}
	if err := unix.EpollCtl(fd, unix.EPOLL_CTL_ADD, wake, &ev); err != nil {
		unix.Close(fd)
		return -1, os.NewSyscallError("epoll_ctl", err)
	}
	return fd, nil
}

// setEvents sets what c's socket is watched for, counting the connections
// waiting to connect or to write (outWait): a loop does not sleep past
// them. It does not tell epoll (watch does).
func (l *loop) setEvents(c *lconn, ev uint32) {
	if c.events&unix.EPOLLOUT != 0 {
		l.outWait--
	}
	if ev&unix.EPOLLOUT != 0 {
		l.outWait++
	}
	c.events = ev
}
