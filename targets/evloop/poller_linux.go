package evloop

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Poller is an epoll set waited for in the Go netpoller. One goroutine
// runs it (Run); Add, Mod and Del are called from that goroutine; Close
// from another.
type Poller struct {
	fd     int
	file   *os.File // fd, as the netpoller knows it
	rc     syscall.RawConn
	evs    []unix.EpollEvent
	closed atomic.Bool
	modded bool // Mod was called while handling the batch
}

// NewPoller makes an empty set whose batches hold up to batch events.
func NewPoller(batch int) (*Poller, error) {
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	// Non-blocking, so that os.NewFile gives it to the netpoller.
	if err := unix.SetNonblock(fd, true); err != nil {
		unix.Close(fd)
		return nil, os.NewSyscallError("fcntl", err)
	}
	p := &Poller{fd: fd, file: os.NewFile(uintptr(fd), "epoll"), evs: make([]unix.EpollEvent, max(batch, 1))}
	if p.rc, err = p.file.SyscallConn(); err != nil {
		p.file.Close()
		return nil, err
	}
	return p, nil
}

// Add watches fd for events, reported with tag.
func (p *Poller) Add(fd int, events uint32, tag int32) error {
	return p.ctl(unix.EPOLL_CTL_ADD, fd, events, tag)
}

// Mod changes what fd is watched for.
//
// A batch in which Mod was called is never taken as drained: when fd is
// ready for its new events already and is still on the set's ready list
// (where a level-triggered event of this batch put it back), the kernel
// adds nothing and wakes no one, so only taking the next batch finds it.
// (Add cannot meet this: a new fd is on no list.)
func (p *Poller) Mod(fd int, events uint32, tag int32) error {
	p.modded = true
	return p.ctl(unix.EPOLL_CTL_MOD, fd, events, tag)
}

// Del stops watching fd (closing fd does as much).
func (p *Poller) Del(fd int) error {
	return p.ctl(unix.EPOLL_CTL_DEL, fd, 0, 0)
}

func (p *Poller) ctl(op, fd int, events uint32, tag int32) error {
	ev := unix.EpollEvent{Events: events, Fd: int32(fd), Pad: tag}
	if err := unix.EpollCtl(p.fd, op, fd, &ev); err != nil {
		return os.NewSyscallError("epoll_ctl", err)
	}
	return nil
}

// ErrClosed is what Run returns once Close was called.
var ErrClosed = errors.New("evloop: poller closed")

// Run hands each batch of ready events to handle until none is ready at
// the deadline (zero: none), when it returns nil, or until Close, when it
// returns ErrClosed. While nothing is ready it waits in the netpoller.
//
// Events are level-triggered: what handle leaves unread is in the next
// batch. handle reports whether it left every socket of the batch drained
// (read until a short read or EAGAIN, accepted until EAGAIN, closed, or
// waiting to be writable): then, the batch not being full and Mod not
// called, Run waits at once, since whatever becomes ready from then on
// wakes the netpoller.
// Otherwise it takes the next batch first, so that nothing ready is left
// waiting for a wake-up that a level-triggered event does not send again.
func (p *Poller) Run(deadline time.Time, handle func([]unix.EpollEvent) (drained bool)) error {
	if err := p.file.SetReadDeadline(deadline); err != nil {
		return p.runErr(err)
	}
	err := p.rc.Read(func(fd uintptr) bool {
		for !p.closed.Load() {
			n, err := pollNow(int(fd), p.evs)
			if err != nil && err != unix.EINTR {
				panic(fmt.Sprintf("evloop: epoll_pwait on a valid set: %v", err)) // EBADF, EFAULT, EINVAL: a bug here
			}
			if n == 0 {
				return false // wait for the set to be readable
			}
			p.modded = false
			if handle(p.evs[:n]) && n < len(p.evs) && !p.modded {
				return false
			}
		}
		return true
	})
	return p.runErr(err)
}

func (p *Poller) runErr(err error) error {
	switch {
	case p.closed.Load():
		return ErrClosed
	case errors.Is(err, os.ErrDeadlineExceeded):
		return nil
	}
	return err
}

// Close makes Run return ErrClosed and closes the set once it has. It is
// for another goroutine than Run's: from handle it would wait for itself.
func (p *Poller) Close() error {
	p.closed.Store(true)
	return p.file.Close() // wakes a waiting Run; the set is closed when Run lets go of it
}

// pollNow returns the events ready now, without waiting and without the
// runtime's bookkeeping for a call that might block.
func pollNow(epfd int, evs []unix.EpollEvent) (int, error) {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(unsafe.SliceData(evs))), uintptr(len(evs)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}
