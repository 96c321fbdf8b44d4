package tcp

import (
	"context"
	"net"
	"sync"
	"time"

	"loadgen/loadgen/protocol"
)

// aLongTimeAgo, set as a deadline, makes blocked reads and writes return at
// once (as net/http does to abort).
var aLongTimeAgo = time.Unix(1, 0)

// sock is a kept connection with what Do needs around it: the deadline now
// set (so an unchanged deadline costs nothing), the watch on the run's
// context, and an idempotent Close that may race with Do.
type sock struct {
	c        net.Conn
	deadline time.Time // the deadline set on c; touched only by Do

	mu     sync.Mutex      // orders watch, the cancel callback and close
	ctx    context.Context // the context watched; written by Do under mu
	stop   func() bool     // stops the watch on ctx
	closed bool
}

// begin prepares the connection for one request with deadline (zero means
// none). It reports false when ctx is already done.
func (s *sock) begin(ctx context.Context, deadline time.Time) bool {
	if !deadline.Equal(s.deadline) {
		s.c.SetDeadline(deadline)
		s.deadline = deadline
	}
	if ctx != s.ctx {
		s.watch(ctx)
	}
	return ctx.Err() == nil
}

// watch makes the cancellation of ctx abort any read or write in progress.
// The engine passes the same context to every Do, so this runs once per
// connection; the steady state allocates nothing.
func (s *sock) watch(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stop != nil {
		s.stop()
	}
	s.ctx, s.stop = ctx, nil
	// Undo a previous context's cancellation; a context that is never
	// cancelled needs no watch.
	s.c.SetDeadline(s.deadline)
	if s.closed || ctx.Done() == nil {
		return
	}
	s.stop = context.AfterFunc(ctx, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.ctx == ctx { // not a context that watch has since replaced
			s.c.SetDeadline(aLongTimeAgo)
		}
	})
}

// abort makes blocked reads and writes fail now; the next begin restores
// the deadline.
func (s *sock) abort() {
	s.c.SetDeadline(aLongTimeAgo)
	s.deadline = aLongTimeAgo
}

// close closes the connection once; later calls return nil.
func (s *sock) close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	if s.stop != nil {
		s.stop()
		s.stop = nil
	}
	s.mu.Unlock()
	return s.c.Close()
}

// classify names a failed read or write: past the deadline, or the run
// ended, is Timeout; anything else is the operation's class.
func classify(ctx context.Context, err error, op protocol.ErrClass) protocol.ErrClass {
	if isTimeout(err) || ctx.Err() != nil {
		return protocol.Timeout
	}
	return op
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// readFull reads exactly n bytes from c into buf, like io.ReadFull. buf may
// be shorter than n: a big response wraps around it, only its count kept.
func readFull(c net.Conn, buf []byte, n int) (int64, error) {
	got := 0
	for got < n {
		off := got % len(buf)
		m, err := c.Read(buf[off : off+min(len(buf)-off, n-got)])
		got += m
		if err != nil {
			if got == n {
				break
			}
			return int64(got), err
		}
	}
	return int64(got), nil
}
