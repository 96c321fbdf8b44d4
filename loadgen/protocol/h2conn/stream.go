package h2conn

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2wire"
)

// Stream is one Conn's use of a connection: one HTTP/2 stream at a time,
// a new one per Request. Its fields past closed are guarded by c.mu.
type Stream struct {
	c      *Conn
	h      Handler       // nil: none
	wake   chan struct{} // parked streams wait here; capacity 1
	closed atomic.Bool

	// guarded by c.mu
	ctx      context.Context
	stopCtx  func() bool
	parked   bool
	waitKind Wait
	deadline time.Time // of the current wait

	// the current request, guarded by c.mu
	pick        int    // the request of a mix it sends (Pick); 0 without one
	id          uint32 // 0 before the first request
	finished    bool   // the stream ended: the response is complete, or the stream was reset
	gotHeaders  bool
	status      int32
	peerReset   bool // by the server, with code
	code        http2.ErrCode
	malformed   bool // reset by the client: the server broke HTTP/2 on the stream
	unprocessed bool // above a GOAWAY's last stream: the server did not process it
	read        int64
	written     int64
	sendWindow  int64
	recvUnack   int64
	draw        protocol.Draw // the values of its request's fields (SetDraw)
	bodyLen     int           // the length of its request's body, rendered
}

func newStream(c *Conn, h Handler) *Stream {
	return &Stream{c: c, h: h, wake: make(chan struct{}, 1), finished: true}
}

// Conn is the connection the Stream is on.
func (s *Stream) Conn() *Conn { return s.c }

// Pick makes request i of the Dialer's mix (Config.Requests) the one the
// next Request sends. Only the Stream's own goroutine calls it, before a
// Request (which reads it under the lock).
func (s *Stream) Pick(i int) { s.pick = i }

// Request opens a new stream: HEADERS, then body as DATA within the
// flow-control windows, END_STREAM on the last frame when end is set; then
// waits for w. The request must be over by deadline (zero: none); ctx is
// the run's context, whose end interrupts it. A request the connection
// cannot take (GOAWAY, stream IDs used up) is not sent: Result.Unsent. A
// wait that ends unsatisfied resets the stream (RST_STREAM CANCEL); the
// connection stays.
func (s *Stream) Request(ctx context.Context, deadline time.Time, body []byte, end bool, w Wait) Result {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := s.startLocked(ctx, deadline, true); ok {
		return r
	}
	// The server's SETTINGS_MAX_CONCURRENT_STREAMS (RFC 9113 §5.1.2).
	for c.active >= c.peerMaxStreams {
		if e := c.awaitLocked(s, waitSlot, deadline); e != Satisfied {
			return s.resultLocked(e)
		}
		// Still fresh: a GOAWAY that ended the wait refuses it unsent.
		if r, ok := s.refuseLocked(deadline, true); ok {
			return s.settleLocked(r)
		}
	}
	c.openLocked(s, end && len(body) == 0)
	return s.sendLocked(deadline, body, end, w)
}

// openLocked opens a new stream for s: its HEADERS go to wbuf, with
// END_STREAM when end is set.
func (c *Conn) openLocked(s *Stream, end bool) {
	s.id = c.nextID
	c.nextID += 2
	c.active++
	s.finished, s.gotHeaders, s.status = false, false, 0
	s.peerReset, s.code, s.malformed, s.unprocessed = false, 0, false, false
	s.sendWindow, s.recvUnack = c.peerWindow, 0
	n := len(c.wbuf)
	prefix, block := c.hpPrefix, c.blockLocked(s.pick)
	if c.d.vary != nil && c.d.vary[s.pick].fields != nil {
		block = c.varyLocked(s, &c.d.vary[s.pick], block)
	}
	c.wbuf = h2wire.AppendHeaders(c.wbuf, s.id, end, c.peerMaxFrame, prefix, block)
	c.hpPrefix = c.hpPrefix[:0]
	s.written += int64(len(c.wbuf) - n)
	if c.nextID > h2wire.MaxStreamID {
		c.broken.Store(true) // the last stream ID: new streams need a new connection (§5.1.1)
	}
}

// Send sends data on the stream the last Request opened, END_STREAM after
// it when end is set, and waits for w; as Request otherwise. A stream
// that ended is not sent on: Result.Finished.
func (s *Stream) Send(ctx context.Context, deadline time.Time, data []byte, end bool, w Wait) Result {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := s.startLocked(ctx, deadline, false); ok {
		return r
	}
	if s.finished {
		return s.resultLocked(Satisfied)
	}
	if end && len(data) == 0 {
		c.wbuf = h2wire.AppendData(c.wbuf, s.id, true, c.peerMaxFrame, nil)
		s.written += h2wire.FrameHeaderLen
	}
	return s.sendLocked(deadline, data, end, w)
}

// sendLocked sends data as DATA frames within the flow-control windows,
// flushes and waits for w.
func (s *Stream) sendLocked(deadline time.Time, data []byte, end bool, w Wait) Result {
	c := s.c
	for len(data) > 0 {
		k := int(min(int64(len(data)), int64(c.peerMaxFrame), s.sendWindow, c.sendWindow))
		if k > 0 && len(c.wbuf) >= writeBatch && !c.flushing {
			k = 0 // write what is there first
		}
		if k <= 0 {
			c.flushLocked(s, deadline, true)
			if c.dead {
				return s.resultLocked(s.stoppedLocked(deadline, true))
			}
			if len(c.wbuf) == 0 && s.sendWindow > 0 && c.sendWindow > 0 {
				continue
			}
			if e := c.awaitLocked(s, waitWindow, deadline); e != Satisfied {
				return s.resultLocked(e)
			}
			if s.finished { // the server answered, or reset, before taking the whole body
				if !c.dead && !s.peerReset {
					c.wbuf = h2wire.AppendRSTStream(c.wbuf, s.id, http2.ErrCodeCancel)
				}
				break
			}
			continue
		}
		c.wbuf = h2wire.AppendData(c.wbuf, s.id, end && k == len(data), c.peerMaxFrame, data[:k])
		s.written += int64(h2wire.FrameHeaderLen + k)
		s.sendWindow -= int64(k)
		c.sendWindow -= int64(k)
		data = data[k:]
	}
	c.flushLocked(s, deadline, true)
	if w == WaitNone {
		e := Satisfied
		if c.dead {
			e = Failed
		}
		return s.resultLocked(e)
	}
	return s.resultLocked(c.awaitLocked(s, w, deadline))
}

// startLocked begins a Request or Send: ctx is watched, the byte counts
// start anew, and a request that cannot start gets its Result (ok).
func (s *Stream) startLocked(ctx context.Context, deadline time.Time, fresh bool) (Result, bool) {
	s.watchLocked(ctx)
	s.read, s.written = 0, 0
	r, ok := s.refuseLocked(deadline, fresh)
	if ok {
		s.settleLocked(r)
	}
	return r, ok
}

// refuseLocked returns the Result of a request that cannot start. A
// request on a new stream (fresh) is refused unsent when the connection
// takes no new streams.
func (s *Stream) refuseLocked(deadline time.Time, fresh bool) (Result, bool) {
	c := s.c
	switch {
	case c.dead:
		return Result{End: s.stoppedLocked(deadline, true), ConnErr: c.errClass, Done: true}, true
	case s.closed.Load():
		return Result{End: Closed, Done: true}, true
	case fresh && (c.goaway || c.nextID > h2wire.MaxStreamID):
		// GOAWAY (§6.8) or no stream ID left (§5.1.1): never sent, to be
		// sent on a new connection.
		return Result{End: Failed, ConnErr: protocol.Write, Unsent: true, Done: true}, true
	case s.ctx != nil && s.ctx.Err() != nil:
		return Result{End: Canceled, Done: c.goaway}, true
	case !deadline.IsZero() && !time.Now().Before(deadline):
		return Result{End: Deadline, Done: c.goaway}, true
	}
	return Result{}, false
}

// stoppedLocked returns why s must stop waiting, or Satisfied. The
// deadline is checked only with checkTime.
func (s *Stream) stoppedLocked(deadline time.Time, checkTime bool) End {
	c := s.c
	timedOut := checkTime && !deadline.IsZero() && !time.Now().Before(deadline)
	switch {
	case c.dead && timedOut:
		return Deadline
	case c.dead:
		return Failed
	case s.closed.Load():
		return Closed
	case timedOut:
		return Deadline
	case s.ctx != nil && s.ctx.Err() != nil:
		return Canceled
	}
	return Satisfied
}

// resultLocked ends a wait: e is how it ended. A wait that ended
// unsatisfied resets the stream.
func (s *Stream) resultLocked(e End) Result {
	c := s.c
	if e != Satisfied && !s.finished && !c.dead {
		// The server is told at once: it may be working on the request.
		c.resetLocked(s, http2.ErrCodeCancel)
		c.flushLocked(s, time.Now(), false)
	}
	r := Result{
		End:       e,
		Finished:  s.finished,
		Status:    s.status,
		Reset:     s.peerReset,
		Code:      s.code,
		Malformed: s.malformed,
		Unsent:    s.unprocessed,
		Done:      c.dead || c.goaway || c.nextID > h2wire.MaxStreamID || s.closed.Load(),
		Read:      s.read,
		Written:   s.written,
	}
	if c.dead {
		r.ConnErr = c.errClass
	}
	return s.settleLocked(r)
}

// settleLocked hands the Handler the Result of a wait.
func (s *Stream) settleLocked(r Result) Result {
	if s.h != nil {
		s.h.Settle(r)
	}
	return r
}

// Cancel resets the stream (RST_STREAM CANCEL) unless it ended.
func (s *Stream) Cancel() {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if !s.finished && !c.dead {
		c.resetLocked(s, http2.ErrCodeCancel)
		c.flushLocked(s, time.Time{}, false)
	}
}

// block hands the end of a header block to the Handler.
func (s *Stream) block(kind BlockKind) {
	if s.h != nil {
		s.h.Block(kind, s.status)
	}
}

// watchLocked arranges for the run's end (ctx) to interrupt a wait.
func (s *Stream) watchLocked(ctx context.Context) {
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

// interrupt makes a wait in progress notice Close or the run's end.
func (s *Stream) interrupt() {
	c := s.c
	c.mu.Lock()
	defer c.mu.Unlock()
	s.interruptLocked()
}

func (s *Stream) interruptLocked() {
	c := s.c
	switch {
	case c.reader == s:
		c.interruptReadLocked()
	case s.parked:
		s.signalLocked()
	}
}

// signalLocked wakes s if it is parked.
func (s *Stream) signalLocked() {
	if !s.parked {
		return
	}
	s.parked = false
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Close ends the Stream's request, if any, and detaches it; the last
// Close of a connection closes it. It may run concurrently with Request
// or Send, which then return promptly. It is idempotent.
func (s *Stream) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	c := s.c
	c.mu.Lock()
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
	if !s.finished && !c.dead {
		// Goes with the next write; a wait in progress ends Closed.
		c.resetLocked(s, http2.ErrCodeCancel)
	}
	s.interruptLocked()
	if c.flusher == s { // a write that may be stuck: breaks the connection
		c.wdlValid = false
		c.nc.SetWriteDeadline(aLongTimeAgo)
	}
	c.passReaderLocked()
	c.mu.Unlock()
	c.d.group.Release(c, false)
	return nil
}

// varied is a request's VaryFields, ready to render.
type varied struct {
	fields []VaryField
	names  []int // each one's static name index
}

// SetDraw gives the Stream's next request its values (Config.Vary),
// drawn by the layer above, which renders the body with them too, and
// the body's length, a content-length field's value. Only the Stream's
// own goroutine calls it, before a Request.
func (s *Stream) SetDraw(d protocol.Draw, bodyLen int) { s.draw, s.bodyLen = d, bodyLen }

// varyLocked renders the fields of v with s's values around block, into
// a buffer the connection keeps (its HEADERS are written before the next
// request's).
func (c *Conn) varyLocked(s *Stream, v *varied, block []byte) []byte {
	d := &s.draw
	b := c.vbuf[:0]
	for pseudo := range 2 { // the pseudo fields first (RFC 9113 §8.3)
		if pseudo == 1 {
			b = append(b, block...)
		}
		for i := range v.fields {
			f := &v.fields[i]
			if (f.Name[0] == ':') != (pseudo == 0) {
				continue
			}
			if f.Value == nil { // the length of the rendered body
				c.vval = strconv.AppendInt(c.vval[:0], int64(s.bodyLen), 10)
			} else {
				c.vval = f.Value.Append(c.vval[:0], d)
			}
			b = h2wire.AppendLiteralValue(b, v.names[i], f.Name, c.vval)
		}
	}
	c.vbuf = b
	return b
}
