package loadgen

import (
	"context"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"loadgen/internal/allocs"
	"loadgen/internal/race"
	"loadgen/loadgen/pace"
	"loadgen/results"
)

// pacedLoop is one event loop of an open-loop run at rate over conns
// connections to the in-process echo target, its connections open, its
// clock started now and every connection free: what newLoops and run set
// up, without run's goroutine, so that a test drives its turns.
func pacedLoop(t *testing.T, rate float64, conns int) *loop {
	t.Helper()
	stampsOn(t)
	d := loopDialer{sd: rrDialer(t, echoServer(t).Addr())}
	p := pace.Constant{PerSec: rate}
	cfg := Config{Pacer: p}
	cfg.Connections, cfg.Threads, cfg.Duration = conns, 1, results.Duration(time.Hour)
	cfg.setDefaults()
	e := &engine{cfg: cfg, pacer: p, slack: max(0, cfg.Slack), runCtx: context.Background(), begin: make(chan struct{})}
	e.shards = []*shard{newShard(true, true)}
	e.counts = make([]counter, 1)
	drv, err := newLoops(e, d)
	if err != nil {
		t.Fatal(err)
	}
	l := drv.(*loops).ls[0]
	t.Cleanup(l.closeFDs)
	l.prefetch()
	for _, c := range l.conns {
		if c.fd < 0 {
			t.Fatal("not connected")
		}
	}
	if !l.stamps {
		t.Fatal("the loop does not read the kernel's receive timestamps")
	}
	e.start = time.Now()
	e.measure = e.start
	l.idle = append(l.idle, l.conns...)
	return l
}

// stampsOn waits until the kernel stamps the TCP segments it receives,
// and keeps it so until the test ends. The first socket that asks for
// SO_TIMESTAMPNS, when none has it, turns stamping on in deferred work
// (net_enable_timestamp); a segment received before that work ran has no
// stamp, and TCP then gives none: an answer to a loop's first request
// sent at once, on loopback, came unstamped about one run in thirty and
// was timed when read.
func stampsOn(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	rc, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) }); err != nil || serr != nil {
		t.Fatalf("SO_TIMESTAMPNS: %v %v", err, serr)
	}
	b, oob := make([]byte, 1), make([]byte, 128)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		if _, err := s.Write(b); err != nil {
			t.Fatal(err)
		}
		var ns int64
		var rerr error
		if err := rc.Read(func(fd uintptr) bool {
			_, oobn, _, _, err := unix.Recvmsg(int(fd), b, oob, 0)
			if err == unix.EAGAIN {
				return false
			}
			ns, rerr = stampOf(oob[:oobn]), err
			return true
		}); err != nil || rerr != nil {
			t.Fatalf("recvmsg: %v %v", err, rerr)
		}
		if ns != 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the kernel stamps no TCP segment it receives")
		}
	}
}

// A loop with a connection free and its next send ahead sleeps past the
// answers that come meanwhile and reads them when it wakes to send; each
// counts as done when the kernel received it, not when the loop read it:
// the latency is the target's, not the loop's sleep.
func TestLoopTimesAnswersOnArrival(t *testing.T) {
	const gap = 250 * time.Millisecond
	l := pacedLoop(t, float64(time.Second/gap), 2)
	l.dispatch(l.e.start) // request 0, due now; request 1 is claimed, due in gap
	if l.inFlight != 1 || !l.claimed {
		t.Fatalf("%d requests in flight, next claimed %v: want one, and the next", l.inFlight, l.claimed)
	}
	if !l.sleepy() {
		t.Fatal("a connection free, the next request ahead: the loop must sleep past answers")
	}
	s := l.shard
	now := l.e.start
	woke := time.Duration(0)
	for s.succeeded.Count() == 0 {
		if now.Sub(l.e.start) > 5*time.Second {
			t.Fatalf("no answer in 5 s (errors %d)", s.errors())
		}
		var ok bool
		if now, ok = l.turn(now); !ok {
			t.Fatal("the loop could not go on")
		}
		if woke == 0 {
			woke = now.Sub(l.e.start)
		}
	}
	read := now.Sub(l.e.start)
	// The first wake-up is for request 1 (at gap, the kernel's timer slack
	// early at most), not for the answer to request 0.
	if woke < gap-10*time.Millisecond {
		t.Errorf("the loop woke %v after the first send, before the next was due (%v): it waited for the answer", woke, gap)
	}
	// Request 0 started on time, so its corrected latency is its
	// uncorrected one: the target's answer, a fraction of a millisecond
	// (a busy machine can make it more, never near the read).
	lat := s.succeeded.Max()
	if lat > read-100*time.Millisecond {
		t.Errorf("latency %v for an answer read %v after its send: timed when read, not when it arrived", lat, read)
	}
	if u := s.uncorrected.Max(); u > lat {
		t.Errorf("uncorrected latency %v above the corrected %v", u, lat)
	}
	t.Logf("first wake-up after %v, answer read after %v, latency %v", woke, read, lat)
}

// Requests due within the slack of the next one share its wake-up, at the
// run's rate per loop then; none when fewer than two fall within it.
func TestSlackAt(t *testing.T) {
	for _, tc := range []struct {
		rate  float64
		loops int
		slack time.Duration
		want  time.Duration
	}{
		{20000, 1, 200 * time.Microsecond, 200 * time.Microsecond},   // 5 gaps of 50 µs
		{30000, 1, 200 * time.Microsecond, 199998 * time.Nanosecond}, // 6 gaps of 33.333 µs
		{20000, 2, 200 * time.Microsecond, 200 * time.Microsecond},   // 2 gaps of 100 µs per loop
		{8000, 1, 200 * time.Microsecond, 125 * time.Microsecond},    // 1 gap of 125 µs
		{4000, 1, 200 * time.Microsecond, 0},                         // a gap of 250 µs: each alone
		{20000, 1, 0, 0},                                             // no slack asked
		{0, 1, 200 * time.Microsecond, 0},                            // a ramp from 0
	} {
		l := &loop{e: &engine{pacer: pace.Constant{PerSec: tc.rate}, start: time.Now()}, slack: tc.slack, loops: tc.loops}
		if got := l.slackAt(l.e.start.Add(time.Second)); got != tc.want {
			t.Errorf("%v/s over %d loops, slack %v: %v, want %v", tc.rate, tc.loops, tc.slack, got, tc.want)
		}
	}
}

// A wait asked for d comes at d: the kernel's timer slack is taken off
// the timeout (max(50 µs, d/1000), d/200 for a niced thread, at most
// 100 ms), except that a wait within the slack is asked as is.
func TestEarlyBy(t *testing.T) {
	normal := timerSlack{min: 50 * time.Microsecond, div: 1000}
	niced := timerSlack{min: 50 * time.Microsecond, div: 200}
	for _, tc := range []struct {
		d    time.Duration
		k    timerSlack
		want time.Duration
	}{
		{-1, normal, -1},
		{0, normal, 0},
		{30 * time.Microsecond, normal, 30 * time.Microsecond},
		{50 * time.Microsecond, normal, 50 * time.Microsecond},
		{time.Millisecond, normal, 950 * time.Microsecond},
		{time.Second, normal, time.Second - time.Millisecond},
		{time.Second, niced, time.Second - 5*time.Millisecond},
		{1000 * time.Second, normal, 1000*time.Second - 100*time.Millisecond},
		{time.Millisecond, timerSlack{}, time.Millisecond}, // realtime: no slack
	} {
		if got := earlyBy(tc.d, tc.k); got != tc.want {
			t.Errorf("earlyBy(%v, %+v) = %v, want %v", tc.d, tc.k, got, tc.want)
		}
	}
}

// A loop's turn that sleeps to its next send, reads the answers that came
// meanwhile with their stamps and sends allocates nothing.
func TestLoopSleepAllocatesNothing(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are measured without -race (make test)")
	}
	l := pacedLoop(t, 2000, 2) // a gap of 500 µs: each send its own wake-up
	now := l.e.start
	l.dispatch(now) // as run starts the loop's schedule
	one := func() {
		c := &l.e.counts[0]
		before := c.n.Load()
		for c.n.Load() == before {
			now, _ = l.turn(now)
		}
	}
	one()
	if n := allocs.Count(1000, one); n > allocs.Slack {
		t.Errorf("%d allocations in 1000 requests, want 0", n)
	}
}

// A loop that wakes with more answers ready than one wait returns reads
// the rest before it judges deadlines: an answer that came in time and
// waited in its socket past its deadline is an answer, not a timeout.
func TestLoopReadsEveryAnswerBeforeDeadlines(t *testing.T) {
	l := pacedLoop(t, 100, 320)
	// Requests 0…299 are due, 300 in 5 ms: more than one wait returns
	// (len(l.evs)), with connections to spare.
	l.e.start = time.Now().Add(-2995 * time.Millisecond)
	l.e.measure = l.e.start
	l.dispatch(time.Now())
	n := l.inFlight
	if n <= len(l.evs) || len(l.idle) == 0 {
		t.Fatalf("%d in flight, %d free: want more than %d, and one free", n, len(l.idle), len(l.evs))
	}
	// Every answer comes: each request's echo waits whole in its socket
	// (a fixed sleep let a busy machine's echo target answer late, and
	// the request then timed out, rightly).
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		waiting := 0
		for c := l.flightHead; c != nil; c = c.next {
			if q, err := unix.IoctlGetInt(c.fd, unix.SIOCINQ); err == nil && q >= len(c.req) {
				waiting++
			}
		}
		if waiting == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d answers in their sockets after 10 s", waiting, n)
		}
	}
	now := time.Now()
	// The next send, and every deadline, come while the loop sleeps.
	l.claimAt, l.claimWake = now.Add(20*time.Millisecond), now.Add(20*time.Millisecond)
	for c := l.flightHead; c != nil; c = c.next {
		c.deadline = now.Add(5 * time.Millisecond)
	}
	if !l.sleepy() {
		t.Fatal("want the loop to sleep past answers")
	}
	for range 2 {
		now, _ = l.turn(now)
	}
	if got, errs := l.shard.succeeded.Count(), l.shard.errors(); got != int64(n) || errs != 0 {
		t.Errorf("%d answered, %d errors; want %d answered, none timed out", got, errs, n)
	}
}
