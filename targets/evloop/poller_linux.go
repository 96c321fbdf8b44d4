package evloop

import (
	"errors"
	"fmt"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"loadgen/internal/heldp"
)

// Poller is an epoll set waited for in the Go netpoller, or, once told to
// keep its P (keepP), in epoll_pwait itself. One goroutine runs it (Run);
// Add, Mod and Del are called from that goroutine; Close from another.
type Poller struct {
	fd     int
	file   *os.File // fd, as the netpoller knows it
	rc     syscall.RawConn
	evs    []unix.EpollEvent
	closed atomic.Bool
	modded bool // Mod was called while handling the batch

	// Kept: Run waits in epoll_pwait keeping its P (package heldp), and
	// Close wakes it through wake, an eventfd in the set. mu orders Close
	// against Run: the set and wake are closed by whichever comes last.
	kept     bool
	wake     int
	mu       sync.Mutex
	running  bool
	released bool
}

// wakeTag tags the eventfd's events; targets tag theirs from -1 up.
const wakeTag = math.MinInt32

// keepP makes Run wait keeping its P: the caller took one (heldp.Take).
func (p *Poller) keepP() error {
	fd, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		return os.NewSyscallError("eventfd", err)
	}
	if err := p.ctl(unix.EPOLL_CTL_ADD, fd, unix.EPOLLIN, wakeTag); err != nil {
		unix.Close(fd)
		return err
	}
	p.kept, p.wake = true, fd
	return nil
}

// unpoll takes a kept set out of the Go netpoller, which watches it from
// NewPoller on: left there, every event of the set would also wake the
// runtime's own epoll wait — a second thread woken per message, measured
// on tcpecho's TCP_RR (two context switches a round trip where one
// belongs). The set lives on in a duplicate; closing the file takes the
// original out of the netpoller (EPOLL_CTL_DEL). Best effort: when no
// duplicate can be made the set stays as it was, its waits right, only
// dearer. The file is done with once closed, even when Close reports an
// error: the duplicate is the set from then on.
func (p *Poller) unpoll() {
	fd, err := unix.FcntlInt(uintptr(p.fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return
	}
	p.file.Close()
	p.fd, p.file, p.rc = fd, nil, nil
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
	if p.kept {
		return p.runKept(deadline, handle)
	}
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

// runKept is Run keeping the P: every wait is epoll_pwait's own, so what
// is ready is always in the next batch, drained or not.
func (p *Poller) runKept(deadline time.Time, handle func([]unix.EpollEvent) bool) error {
	p.mu.Lock()
	if p.closed.Load() {
		p.mu.Unlock()
		return ErrClosed
	}
	p.running = true
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.running = false
		if p.closed.Load() {
			p.release()
		}
		p.mu.Unlock()
	}()
	for !p.closed.Load() {
		ms := -1
		if !deadline.IsZero() {
			d := time.Until(deadline)
			if d <= 0 {
				return nil
			}
			ms = int((d + time.Millisecond - 1) / time.Millisecond)
		}
		n, err := heldp.Wait(p.fd, p.evs, ms)
		if err != nil {
			if err == unix.EINTR {
				continue // a preemption or a stop of the world: Go code runs, then the wait goes on
			}
			panic(fmt.Sprintf("evloop: epoll_pwait on a valid set: %v", err))
		}
		evs := p.evs[:n]
		for i := 0; i < len(evs); i++ {
			if evs[i].Pad == wakeTag { // Close: the loop above ends
				evs[i] = evs[len(evs)-1]
				evs = evs[:len(evs)-1]
				i--
			}
		}
		if len(evs) > 0 {
			handle(evs)
		}
	}
	return ErrClosed
}

// release closes the set and wake; p.mu is held.
func (p *Poller) release() {
	if p.released {
		return
	}
	p.released = true
	unix.Close(p.wake)
	if p.file == nil { // unpoll
		unix.Close(p.fd)
		return
	}
	p.file.Close()
}

// Close makes Run return ErrClosed and closes the set once it has. It is
// for another goroutine than Run's: from handle it would wait for itself.
func (p *Poller) Close() error {
	if p.kept {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.closed.Store(true)
		if !p.running {
			p.release()
			return nil
		}
		one := [8]byte{1}
		_, err := unix.Write(p.wake, one[:]) // ends the wait; Run closes the set as it returns
		return err
	}
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
