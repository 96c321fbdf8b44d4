package loadgen

import (
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Kernel receive timestamps (SO_TIMESTAMPNS): when an answer's last bytes
// arrived, not when the loop got to read them.

// stampSock turns on the kernel's receive timestamps for a multiplexed
// socket of a loop that pauses.
func (l *loop) stampSock(s *msock) {
	s.stamped = l.coalesce > 0 && s.fd >= 0 && stampReads(s.fd)
}

// stampReads turns on the kernel's receive timestamps for fd; false when
// it cannot.
func stampReads(fd int) bool {
	return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) == nil
}

// rawReadStamped is rawRead through recvmsg, with the kernel's receive
// timestamp of the last bytes it read (ns on the wall clock; 0 when none
// came). oob holds the control message.
func rawReadStamped(fd int, p []byte, oob []byte) (int, int64, error) {
	iov := unix.Iovec{Base: unsafe.SliceData(p)}
	iov.SetLen(len(p))
	msg := unix.Msghdr{Iov: &iov, Control: unsafe.SliceData(oob)}
	msg.SetIovlen(1)
	msg.SetControllen(len(oob))
	n, _, e := unix.RawSyscall(unix.SYS_RECVMSG, uintptr(fd), uintptr(unsafe.Pointer(&msg)), unix.MSG_DONTWAIT)
	if e != 0 {
		return 0, 0, e
	}
	return int(n), stampOf(oob[:msg.Controllen]), nil
}

// stampOf finds SCM_TIMESTAMPNS in control messages, without allocating.
func stampOf(b []byte) int64 {
	for len(b) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		if h.Len < unix.SizeofCmsghdr || uint64(h.Len) > uint64(len(b)) {
			return 0
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SO_TIMESTAMPNS && int(h.Len) >= unix.CmsgLen(int(unsafe.Sizeof(unix.Timespec{}))) {
			ts := (*unix.Timespec)(unsafe.Pointer(&b[unix.CmsgLen(0)]))
			return ts.Nano()
		}
		b = b[min(len(b), unix.CmsgSpace(int(h.Len)-unix.CmsgLen(0))):]
	}
	return 0
}

// arrived is when bytes that a read at now took arrived, from the kernel's
// timestamp ns (wall clock), on now's monotonic clock: now when there is
// none, or when the wall clock was set under it (before sent, or ahead).
func arrived(now time.Time, ns int64, sent time.Time) time.Time {
	if ns == 0 {
		return now
	}
	ago := time.Duration(now.UnixNano() - ns)
	if ago <= 0 {
		return now
	}
	at := now.Add(-ago)
	if at.Before(sent) {
		return now
	}
	return at
}
