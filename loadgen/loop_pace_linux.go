package loadgen

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"loadgen/internal/heldp"
)

// How the event loop waits between the open loop's sends: as seldom as the
// schedule allows, since a wake-up costs more than the request it is for
// (docs/benchmarks.md). It sleeps to the next send in the wait itself,
// early by the kernel's timer slack (early); requests due within
// Config.Slack of the next share its wake-up (slackAt), none sent early;
// and while a connection is free it sleeps on its eventfd alone (sleep),
// reading the answers that came meanwhile when it wakes, each timed by the
// kernel's receive timestamp (loop_rxtime_linux.go).

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

// sleepy tells whether the loop may sleep without waiting for answers:
// open loop, its answers timed by the kernel, a connection free for the
// next request, none waiting to connect or to write, and every event of
// the last wait taken (full).
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
