package h2conn

import (
	"errors"

	"golang.org/x/net/http2"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2wire"
)

// Fed is a connection an event loop drives: the loop owns the socket and
// the clock, writes what Output holds, reads into ReadBuf and hands what
// it read to Filled. It is the same Conn as a Dial's — framing, HPACK,
// flow control, SETTINGS, PING, GOAWAY, the server's stream limit, the
// checks RFC 9113 asks for — without its goroutine-facing half: no lock
// taken, no goroutine parked, no system call made. Its requests are the
// Dialer's, on Slots streams at once; slot k carries one request at a
// time. One goroutine uses a Fed. A layer's protocol.Mux embeds it and
// adds Start, Fail, Outcome and Cancel in its own terms.
//
// With Keep, a slot's stream outlives its request (gRPC's ping-pong): a
// request is one message on the slot's open stream, answered when its
// Handler is Ready; the stream opens with the slot's first message, and
// again after it ended (the server ended it, or a deadline reset it).
type Fed struct {
	c     *Conn
	slots []*Stream
	body  []byte   // the request's body, the same for every request
	kbody [][]byte // with a request mix: slot k's request's body (Pick)
	busy  []bool   // slot k has a request in flight
	pend  [][]byte // slot k's body not yet sent: the windows were shut
	npend int      // slots with pend
	done  []int32  // the slots whose request ended in the last call
	wpos  int      // Output is c.wbuf[wpos:]
	ready bool     // the server's SETTINGS came
	keep  bool     // streams stay open between requests (Keep)
}

// Fed makes the state of a connection an event loop drives, for slots
// requests at once, each with body; hs, if any, are the slots' Handlers
// (a layer's part of each stream, as a Dial's). Its preface and SETTINGS
// are the first Output.
func (d *Dialer) Fed(slots int, body []byte, hs ...Handler) *Fed {
	c := newConn(d, true)
	c.shared = slots > 1
	f := &Fed{c: c, body: body, busy: make([]bool, slots), pend: make([][]byte, slots), done: make([]int32, 0, slots)}
	if len(d.cfg.Requests) > 0 {
		f.kbody = make([][]byte, slots)
		for k := range f.kbody {
			f.kbody[k] = body
		}
	}
	for k := range slots {
		var h Handler
		if k < len(hs) {
			h = hs[k]
		}
		s := newStream(c, h)
		c.streams = append(c.streams, s)
		f.slots = append(f.slots, s)
	}
	return f
}

// Keep makes the slots keep their streams open between requests: a
// request is a message on the stream, without END_STREAM, and it ends
// when the slot's Handler is Ready (a reply came) or the stream ends.
// Call it before the first Start.
func (f *Fed) Keep() { f.keep = true }

// Fresh reports that slot k's next Start opens a new stream: always
// without Keep; with it, when the slot has no open stream.
func (f *Fed) Fresh(k int) bool { return !f.keep || f.slots[k].finished }

// Output is what the connection has to write: the loop writes it and
// says how much with Wrote.
func (f *Fed) Output() []byte { return f.c.wbuf[f.wpos:] }

// Wrote consumes n bytes of Output.
func (f *Fed) Wrote(n int) {
	f.wpos += n
	switch {
	case f.wpos >= len(f.c.wbuf):
		f.c.wbuf, f.wpos = f.c.wbuf[:0], 0
	case f.wpos >= writeBatch:
		// A socket that takes part of what is there at every turn: the
		// rest moves to the front, so that the buffer does not grow with
		// everything ever written.
		f.c.wbuf = f.c.wbuf[:copy(f.c.wbuf, f.c.wbuf[f.wpos:])]
		f.wpos = 0
	}
}

// ReadBuf is where the loop reads into next; Filled says how much it read.
// The buffer is lent (frames) until Filled has parsed every frame in it.
func (f *Fed) ReadBuf() []byte {
	c := f.c
	c.compact()
	if c.rbuf == nil {
		c.rbuf = frames.Get()[:readBufSize]
	}
	return c.rbuf[c.rend:]
}

// frames lends Feds their read buffers: a connection waiting for its
// answers holds none, only one with a frame partly read.
var frames = protocol.NewBuffers(readBufSize)

// giveBack returns the read buffer once no partial frame is left in it.
func (f *Fed) giveBack() {
	if c := f.c; c.rbuf != nil && (c.rpos == c.rend || c.dead) {
		frames.Put(c.rbuf)
		c.rbuf, c.rpos, c.rend = nil, 0, 0
	}
}

// Ready reports that the handshake is over: the server's SETTINGS came,
// and requests may start.
func (f *Fed) Ready() bool { return f.ready }

// Usable reports that the connection takes new requests: it has not
// failed, received GOAWAY or used up its stream IDs.
func (f *Fed) Usable() bool { return !f.c.broken.Load() }

// Dead reports that the connection failed: the socket must be closed once
// Output is written, if it can be.
func (f *Fed) Dead() bool { return f.c.dead }

// ErrNotHTTP2 is a server whose first bytes are not a SETTINGS frame.
var ErrNotHTTP2 = errors.New("no HTTP/2 SETTINGS from the server")

// Filled processes the n bytes the loop read into ReadBuf and returns the
// slots whose request ended (Result says how): answered, reset, or failed
// with the connection when what came broke HTTP/2. The slice is valid
// until the next call.
func (f *Fed) Filled(n int) []int32 {
	defer f.giveBack()
	c := f.c
	c.rend += n
	f.done = f.done[:0]
	if !f.ready && c.rend >= h2wire.FrameHeaderLen && !isSettings(c.rbuf[c.rpos:c.rend]) && !c.gotSettings {
		c.failLocked(protocol.Protocol, ErrNotHTTP2)
		return f.failed()
	}
	if err := c.processLocked(); err != nil {
		c.failLocked(readErrClass(err), err)
		return f.failed()
	}
	if c.gotSettings && !f.ready {
		f.ready = true
		c.d.opened.Add(1)
	}
	for k, b := range f.busy {
		if b && (f.slots[k].finished || f.keep && f.replied(k)) {
			f.end(k)
		}
	}
	if f.npend > 0 { // the windows may have opened: on the streams that live on
		f.push()
	}
	return f.done
}

// Fail breaks the connection: the socket failed (class Read or Write), or
// the peer closed it. It returns the slots whose request it ended.
func (f *Fed) Fail(class protocol.ErrClass, err error) []int32 {
	defer f.giveBack()
	f.done = f.done[:0]
	f.c.failLocked(class, err)
	return f.failed()
}

func (f *Fed) failed() []int32 {
	for k, b := range f.busy {
		if b {
			f.end(k)
		}
	}
	return f.done
}

// replied reports that slot k's Handler has the reply it waits for.
func (f *Fed) replied(k int) bool {
	h := f.slots[k].h
	return h != nil && h.Ready()
}

func (f *Fed) end(k int) {
	f.busy[k] = false
	f.done = append(f.done, int32(k))
	if f.pend[k] != nil {
		f.pend[k] = nil
		f.npend--
		s := f.slots[k]
		switch {
		case f.c.dead:
		case !s.finished:
			// Keep: the reply came before the whole message was sent.
			f.c.resetLocked(s, http2.ErrCodeCancel)
		case !s.peerReset && !s.malformed && !s.unprocessed:
			// The server answered before it took the whole body (a
			// stream reset by either side, or not processed, is over
			// already).
			f.c.wbuf = h2wire.AppendRSTStream(f.c.wbuf, s.id, http2.ErrCodeCancel)
		}
	}
}

// Start outcomes.
const (
	Started = iota // the request's frames are in Output
	Later          // the server's stream limit: start it once a request ends
	Refused        // the connection takes no new request: Result says why
)

// Start opens slot k's next request: its HEADERS, and as much of the body
// as the flow-control windows allow, go to Output (the rest once the
// server's WINDOW_UPDATE comes). The connection must be Ready. A request
// Refused gets its Result here.
func (f *Fed) Start(k int) (int, Result) {
	c, s := f.c, f.slots[k]
	s.read, s.written = 0, 0
	open := f.Fresh(k) // a message on a kept stream needs none of these
	switch {
	case c.dead:
		return Refused, Result{End: Failed, ConnErr: c.errClass, Done: true}
	case open && (c.goaway || c.nextID > h2wire.MaxStreamID):
		// GOAWAY (§6.8) or no stream ID left (§5.1.1): never sent, to be
		// sent on a new connection.
		return Refused, Result{End: Failed, ConnErr: protocol.Write, Unsent: true, Done: true}
	case open && c.active >= c.peerMaxStreams:
		return Later, Result{}
	}
	body := f.body
	if f.kbody != nil {
		body = f.kbody[k]
	}
	if open {
		c.openLocked(s, len(body) == 0 && !f.keep)
	}
	f.busy[k] = true
	if len(body) > 0 {
		f.pend[k] = body
		f.npend++
		f.push()
	}
	return Started, Result{}
}

// Body is the body given to Fed: every request's, without a mix.
func (f *Fed) Body() []byte { return f.body }

// SetDraw gives slot k's next request its values and its body, rendered
// by the layer above (Stream.SetDraw): the body stays the caller's until
// the request ends.
func (f *Fed) SetDraw(k int, d protocol.Draw, body []byte) {
	f.slots[k].SetDraw(d, len(body))
	if f.kbody == nil {
		f.kbody = make([][]byte, len(f.slots))
		for j := range f.kbody {
			f.kbody[j] = f.body
		}
	}
	f.kbody[k] = body
}

// Pick makes request i of the Dialer's mix (Config.Requests), with body,
// what slot k's next Start sends.
func (f *Fed) Pick(k, i int, body []byte) {
	f.slots[k].pick = i
	f.kbody[k] = body
}

// push sends what the windows allow of the bodies not yet sent.
func (f *Fed) push() {
	c := f.c
	for k, rest := range f.pend {
		if rest == nil {
			continue
		}
		s := f.slots[k]
		for len(rest) > 0 {
			n := int(min(int64(len(rest)), int64(c.peerMaxFrame), s.sendWindow, c.sendWindow))
			if n <= 0 {
				break
			}
			c.wbuf = h2wire.AppendData(c.wbuf, s.id, n == len(rest) && !f.keep, c.peerMaxFrame, rest[:n])
			s.written += int64(h2wire.FrameHeaderLen + n)
			s.sendWindow -= int64(n)
			c.sendWindow -= int64(n)
			rest = rest[n:]
		}
		if len(rest) == 0 {
			f.pend[k] = nil
			f.npend--
		} else {
			f.pend[k] = rest
		}
	}
}

// Result is what became of slot k's request, once Filled or Fail said it
// ended; the slot's Handler settles it.
func (f *Fed) Result(k int) Result {
	s := f.slots[k]
	e := Satisfied
	if !s.finished && !(f.keep && f.replied(k)) { // the connection failed first
		e = Failed
	}
	return s.resultLocked(e)
}

// Goodbye says the client is closing the connection (GOAWAY, RFC 9113
// §6.8) and returns what is left to write, the GOAWAY last.
func (f *Fed) Goodbye() []byte {
	f.c.goodbyeLocked(http2.ErrCodeNo)
	return f.Output()
}

// Cancel ends slot k's request at its deadline: the stream is reset
// (RST_STREAM CANCEL, in Output); the connection stays.
func (f *Fed) Cancel(k int) Result {
	c, s := f.c, f.slots[k]
	if !f.busy[k] {
		return Result{End: Deadline}
	}
	if !c.dead {
		c.resetLocked(s, http2.ErrCodeCancel)
	}
	f.busy[k] = false
	if f.pend[k] != nil {
		f.pend[k] = nil
		f.npend--
	}
	return s.resultLocked(Deadline)
}
