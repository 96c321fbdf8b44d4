package h2

import (
	"context"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2wire"
)

// stream is a protocol.Conn: one of the Streams Conns sharing a connection. It
// runs one request (one HTTP/2 stream) at a time. Its fields past closed are
// guarded by c.mu.
type stream struct {
	c      *conn
	wake   chan struct{} // parked streams wait here; capacity 1
	closed atomic.Bool

	// guarded by c.mu
	ctx      context.Context
	stopCtx  func() bool
	parked   bool
	waitKind waitFor
	deadline time.Time // of the current wait

	// the current request, guarded by c.mu
	id          uint32 // 0 before the first request
	finished    bool   // the response is complete, or the stream was reset
	gotHeaders  bool
	status      int32
	errClass    protocol.ErrClass // a stream-level failure (RST_STREAM, malformed response)
	unprocessed bool              // above a GOAWAY's last stream: the server did not process it
	bytes       int64
	written     int64
	sendWindow  int64
	recvUnack   int64
}

var _ protocol.Conn = (*stream)(nil)

func newStream(c *conn) *stream {
	return &stream{c: c, wake: make(chan struct{}, 1), finished: true}
}

// Do sends one request on a new stream and reads the whole response.
func (s *stream) Do(ctx context.Context, deadline time.Time) protocol.Outcome {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	s.watchLocked(ctx)
	s.gotHeaders, s.status, s.errClass, s.unprocessed = false, 0, protocol.None, false
	s.bytes, s.written, s.recvUnack = 0, 0, 0
	if o, ok := s.refuseLocked(deadline); ok {
		return o
	}
	for c.active >= c.peerMaxStreams { // the server's SETTINGS_MAX_CONCURRENT_STREAMS
		if class := c.awaitLocked(s, waitSlot, deadline); class != protocol.None {
			return s.outcomeLocked(class)
		}
		if o, ok := s.refuseLocked(deadline); ok {
			return o
		}
	}

	// HEADERS, then DATA within the flow-control windows.
	s.id = c.nextID
	c.nextID += 2
	c.active++
	s.finished = false
	s.sendWindow = c.peerWindow
	body := c.d.t.body
	block := c.d.blocks.Steady
	switch c.hp {
	case hpFirst:
		block = c.d.blocks.First
		c.hp = hpSteady
	case hpLiteral:
		block = c.d.blocks.Literal
	}
	n := len(c.wbuf)
	c.wbuf = h2wire.AppendHeaders(c.wbuf, s.id, len(body) == 0, c.peerMaxFrame, c.hpPrefix, block)
	c.hpPrefix = c.hpPrefix[:0]
	s.written += int64(len(c.wbuf) - n)
	for len(body) > 0 {
		k := int(min(int64(len(body)), int64(c.peerMaxFrame), s.sendWindow, c.sendWindow))
		if k <= 0 {
			c.flushLocked(s, deadline, true)
			if class := c.awaitLocked(s, waitWindow, deadline); class != protocol.None {
				return s.outcomeLocked(class)
			}
			if s.finished { // the server answered before reading the whole body
				if !c.dead {
					c.wbuf = h2wire.AppendRSTStream(c.wbuf, s.id, http2.ErrCodeCancel)
				}
				break
			}
			continue
		}
		c.wbuf = h2wire.AppendData(c.wbuf, s.id, k == len(body), c.peerMaxFrame, body[:k])
		s.written += int64(h2wire.FrameHeaderLen + k)
		s.sendWindow -= int64(k)
		c.sendWindow -= int64(k)
		body = body[k:]
	}
	c.flushLocked(s, deadline, true)
	return s.outcomeLocked(c.awaitLocked(s, waitResponse, deadline))
}

// refuseLocked returns the outcome of a Do that cannot start a stream.
func (s *stream) refuseLocked(deadline time.Time) (protocol.Outcome, bool) {
	c := s.c
	switch {
	case c.dead || s.closed.Load():
		return protocol.Outcome{Err: s.stoppedLocked(deadline, true), Done: true}, true
	case c.goaway || c.nextID > h2wire.MaxStreamID:
		return protocol.Outcome{Err: protocol.Write, Done: true, Unsent: true}, true // never sent: dial anew and send it there
	case s.ctx != nil && s.ctx.Err() != nil:
		return protocol.Outcome{Err: protocol.Timeout}, true
	}
	return protocol.Outcome{}, false
}

// stoppedLocked returns why s must stop waiting, or None. The deadline is
// checked only with checkTime.
func (s *stream) stoppedLocked(deadline time.Time, checkTime bool) protocol.ErrClass {
	c := s.c
	timedOut := checkTime && !deadline.IsZero() && !time.Now().Before(deadline)
	switch {
	case c.dead && timedOut:
		return protocol.Timeout
	case c.dead:
		return c.errClass
	case s.closed.Load():
		return protocol.Read
	case timedOut, s.ctx != nil && s.ctx.Err() != nil:
		return protocol.Timeout
	}
	return protocol.None
}

// outcomeLocked ends the request: class is how the wait ended.
func (s *stream) outcomeLocked(class protocol.ErrClass) protocol.Outcome {
	c := s.c
	o := protocol.Outcome{Status: s.status, Bytes: s.bytes, Written: s.written}
	switch {
	case class != protocol.None:
		o.Err = class
		c.resetLocked(s, http2.ErrCodeCancel, class) // sent with the next write
	case s.errClass != protocol.None:
		o.Err = s.errClass
	case s.status >= 400:
		o.Err = protocol.Status
	}
	o.Done = c.dead || c.goaway || c.nextID > h2wire.MaxStreamID || s.closed.Load()
	o.Unsent = s.unprocessed
	return o
}

// watchLocked arranges for the run's end (ctx) to interrupt a wait.
func (s *stream) watchLocked(ctx context.Context) {
	if ctx == s.ctx {
		return
	}
	if s.stopCtx != nil {
		s.stopCtx()
		s.stopCtx = nil
	}
	s.ctx = ctx
	if ctx.Done() != nil {
		s.stopCtx = context.AfterFunc(ctx, s.interrupt)
	}
}

// interrupt makes a Do in progress notice Close or the run's end.
func (s *stream) interrupt() {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	s.interruptLocked()
}

func (s *stream) interruptLocked() {
	c := s.c
	switch {
	case c.reader == s:
		c.interruptReadLocked()
	case s.parked:
		s.signalLocked()
	}
}

var aLongTimeAgo = time.Unix(1, 0)

// signalLocked wakes s if it is parked.
func (s *stream) signalLocked() {
	if !s.parked {
		return
	}
	s.parked = false
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Close ends the stream's request, if any, and detaches it; the last Close
// of a connection closes it. It may run concurrently with Do, which then
// returns promptly. It is idempotent.
func (s *stream) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.stopCtx != nil {
		s.stopCtx()
		s.stopCtx = nil
	}
	for i, p := range c.streams {
		if p == s {
			c.streams = append(c.streams[:i], c.streams[i+1:]...)
			break
		}
	}
	s.interruptLocked()
	if c.flusher == s { // a write that may be stuck: breaks the connection
		c.wdlValid = false
		c.nc.SetWriteDeadline(aLongTimeAgo)
	}
	c.closeIfUnusedLocked()
	c.passReaderLocked()
	return nil
}
