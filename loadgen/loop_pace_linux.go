package loadgen

import (
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"loadgen/internal/heldp"
)

// How the event loop waits between the open loop's sends. What a wait
// costs here is not the system call but the sleep: every wake-up of an
// idle thread is a context switch and an interrupt (on a VM, exits to the
// hypervisor), and it cost more than the request it was for (perf, in
// docs/benchmarks.md, "Where the open loop stands below its goal"). So a
// loop wakes up as seldom as the schedule allows:
//
//   - It sleeps to the next send in the wait itself (epoll_pwait2, to the
//     nanosecond), asking the kernel for the wake-up its timer slack makes
//     late (kernelSlack): no timerfd to arm and read per request.
//   - Requests due within the slack (Config.Slack) of the next one share
//     its wake-up: the loop wakes when the last of them is due and sends
//     them all (slackAt). None is sent early: each one's latency counts
//     from its intended start, the wait included.
//   - Answers do not wake it. While a connection is free for the next send,
//     the loop sleeps on a set that holds only its eventfd (sleepfd) and
//     reads, when it wakes to send, every answer that came meanwhile, each
//     timed by the kernel's receive timestamp of its last bytes
//     (SO_TIMESTAMPNS): when it arrived, not when the loop got to it. So
//     the loop wakes once per batch of sends, whatever the answers do.
//     With no connection free it waits for answers as any loop does.
//     Multiplexed and TLS connections (whose answers the loop cannot time
//     so), a connection per request (each waits for its connect), and
//     connections waiting to connect or to write the rest of a request,
//     are waited for too.

// slackAt is the loop's slack for the next request, due at: the time from
// it to the last request due within the slack at the schedule's rate then,
// so that the wake-up that sends them comes as the last of them is due and
// none waits for nothing; 0 when no other falls within it (a low rate).
func (l *loop) slackAt(at time.Time) time.Duration {
	if l.slack <= 0 {
		return 0
	}
	r := l.e.pacer.Rate(at.Sub(l.e.start)) / float64(l.loops)
	if r <= 0 {
		return 0
	}
	gap := time.Duration(float64(time.Second) / r)
	if gap <= 0 || gap > l.slack {
		return 0
	}
	return l.slack / gap * gap
}

// sleepy: the loop may sleep without waiting for answers — open loop, its
// answers timed by the kernel, a connection free for the next request,
// none waiting to connect or to write, and every event of the last wait
// taken (full).
func (l *loop) sleepy() bool {
	return l.stamps && l.claimed && !l.exhausted && len(l.idle) > 0 && l.outWait == 0 && !l.full
}

// sleep waits up to d for the engine's eventfd alone (answers do not end
// it); what it reports is taken from the loop's own set afterwards.
func (l *loop) sleep(d time.Duration) {
	if l.holdP {
		heldp.WaitFor(l.sleepfd, l.evs[:1], early(d))
		return
	}
	epollWaitFor(l.sleepfd, l.evs[:1], early(d))
}

// kernelSlack is how late the kernel ends a wait's timeout (a poll's, an
// epoll wait's): its hrtimer may fire up to max(the thread's timer slack,
// the timeout / 1000 (/ 200 when niced)) after it, and does when nothing
// else wakes the CPU. Realtime threads get none. Read once: threads
// inherit the value, and a loop may move between them.
var kernelSlack = sync.OnceValue(func() (s timerSlack) {
	s.div = 1000
	if p, _, e := unix.RawSyscall(unix.SYS_SCHED_GETSCHEDULER, 0, 0, 0); e == 0 && (p == unix.SCHED_FIFO || p == unix.SCHED_RR) {
		s.div = 0
		return s
	}
	if ns, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0); err == nil && ns > 0 {
		s.min = time.Duration(ns)
	}
	if raw, err := unix.Getpriority(unix.PRIO_PROCESS, 0); err == nil && raw < 20 {
		s.div = 200 // niced: the system call returns 20 - nice
	}
	return s
})

// timerSlack is how the kernel makes a timeout d late: by max(min, d/div),
// at most 100 ms; none when div is 0 (a realtime thread).
type timerSlack struct {
	min time.Duration
	div time.Duration
}

// early is the timeout to ask for a wake-up d from now: d less the slack
// the kernel adds to it, so that the wake-up comes at d, not up to the
// slack after. A d within the slack is asked as is (at most the slack
// late): the loop never spins.
func early(d time.Duration) time.Duration { return earlyBy(d, kernelSlack()) }

func earlyBy(d time.Duration, k timerSlack) time.Duration {
	if d <= 0 || k.div == 0 {
		return d
	}
	s := min(max(k.min, d/k.div), 100*time.Millisecond)
	if d <= s {
		return d
	}
	return d - s
}

// coalesceFor is how long a closed loop over multiplexed connections
// pauses before it waits for answers, and coalesceMin how many requests
// it must have in flight to pause: a wake-up by an answer costs the loop
// more than the requests it brings (16-17 µs of CPU on a VM, measured in
// docs/benchmarks.md), and a server with that many to answer keeps busy through
// the pause. The answers that came during it are read after it, each
// timed by the kernel's receive timestamp (SO_TIMESTAMPNS) of the read's
// last bytes: the pause moves no latency by more than the spread of the
// arrivals one read takes.
const (
	coalesceFor   = 50 * time.Microsecond
	coalesceMin   = 32
	coalesceFew   = 8
	coalesceCheck = 64
)

// loopCoalesce is the pause of the loops started from now (coalesceFor;
// 0 in tests that compare with loops that never pause).
var loopCoalesce = coalesceFor

// loopPauses counts the pauses of every loop (tests).
var loopPauses atomic.Int64

// pausable: the loop pauses before its wait (see coalesceFor) with enough
// requests in flight, every event of its last wait taken, and when its
// wake-ups say a pause pays (yields.pays).
func (l *loop) pausable() bool {
	if l.coalesce == 0 || l.inFlight < coalesceMin || l.full {
		return false
	}
	return l.yields.pays()
}

// yields is what a loop's idle turns take, to judge whether its pauses
// pay: for the turns that paused and for those that waited, how many
// requests ended from each until the loop had nothing to read again, as
// moving averages (the latest weighs 1/8). A pause costs about what a
// wake-up by an answer costs (a timer's wake-up against another CPU's, on
// a VM 16 µs each): it pays when it takes more answers than a wait does.
// Against h2c streams a pause took 9 answers where a wait took 1, against
// a grpc-go server's unary calls 2.3 where a wait took 4.7 (its answers
// come in bursts, and a wait for the next burst takes more than a pause
// that ends between two).
type yields struct {
	by            int8 // what the last idle turn did: byPause, byWait, 0 (neither, or found answers ready)
	from          int  // requests ended by then
	pause, wait   float64
	pauses, waits int // turns measured of each
	turn          int // idle turns since the last one against the rule
}

const (
	byPause = 1
	byWait  = 2
)

// start notes what this idle turn does, with the requests ended so far.
func (y *yields) start(by int8, ends int) { y.by, y.from = by, ends }

// tally ends the last idle turn's measure: ends requests ended by now.
func (y *yields) tally(ends int) {
	n := float64(ends - y.from)
	switch y.by {
	case byPause:
		y.pause = movingAvg(y.pause, n, y.pauses)
		y.pauses++
	case byWait:
		y.wait = movingAvg(y.wait, n, y.waits)
		y.waits++
	}
	y.by = 0
}

func movingAvg(avg, n float64, count int) float64 {
	if count == 0 {
		return n
	}
	return avg + (n-avg)/8
}

// pays: whether this idle turn pauses. Not before waits were measured;
// not where a wait takes coalesceFew answers or more (they come densely:
// a wait takes them without sleeping, and a pause would only add a
// sleep); else when pauses take more than waits or were not tried yet.
// One idle turn in coalesceCheck goes against that, to see whether it
// still holds.
func (y *yields) pays() bool {
	if y.waits == 0 || y.wait >= coalesceFew {
		return false
	}
	p := y.pauses == 0 || y.pause > y.wait
	if y.turn++; y.turn >= coalesceCheck {
		y.turn = 0
		return !p
	}
	return p
}

// pauseFor is the pause before a wait of d (< 0: unbounded).
func pauseFor(d, pause time.Duration) time.Duration {
	if d > 0 && d < pause {
		return d
	}
	return pause
}

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
