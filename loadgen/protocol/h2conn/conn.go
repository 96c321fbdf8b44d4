package h2conn

import (
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2wire"
)

// Conn is one HTTP/2 connection, shared by the Streams dialed onto it.
// Everything but the read and write system calls happens under mu.
//
// Reading: the stream that waits first takes the reader role (reading),
// reads and processes frames for every stream, wakes the parked streams
// whose wait is over, and, once its own is over, hands the role to a
// parked stream (handoff) or, when none waits, drops it.
//
// Writing: frames are appended to wbuf; the first stream to flush becomes
// the flusher (flushing) and writes until wbuf stays empty, so the frames
// of all streams ready at once go out in one write. On a shared connection
// the flusher first yields, to let the other ready streams append theirs.
type Conn struct {
	Member // in its Dialer's Group

	d      *Dialer
	raw    net.Conn // the TCP connection: closing it stops everything
	nc     net.Conn // raw, or the TLS connection over it
	shared bool     // more than one stream per connection
	fed    bool     // an event loop owns the socket (Fed): no I/O here
	broken atomic.Bool

	mu sync.Mutex

	streams []*Stream // attached and not closed

	// write side
	wbuf, spare []byte
	flushing    bool
	flusher     *Stream
	wdeadline   time.Time
	wdlValid    bool
	nextID      uint32

	// HPACK: which header block the next request sends
	blocks   []h2wire.RequestBlocks // for the peer's table: the Dialer's, or the connection's own; a mix's by request
	hp       uint8                  // hpFirst, hpSteady or hpLiteral
	hpPrefix []byte                 // a dynamic table size update to send first
	vbuf     []byte                 // a header block with fields rendered (Config.Vary)
	vval     []byte                 // one field's value, rendered
	encMax   uint32                 // our encoder's table size as last signalled

	// the peer's settings and our send windows
	peerMaxFrame   int
	peerWindow     int64 // SETTINGS_INITIAL_WINDOW_SIZE
	peerMaxStreams int
	sendWindow     int64
	active         int // streams in flight
	gotSettings    bool

	// read side: rbuf, rpos, rend and hdec belong to the reader
	reading   bool
	reader    *Stream
	handoff   *Stream
	rdeadline time.Time // as set on nc, if rdlValid (zero: none)
	rdlValid  bool
	// interrupted is set while the read deadline is in the past to end the
	// reader's read (Close, the run's end) until the reader has seen it; no
	// other stream may move it meanwhile.
	interrupted bool
	rbuf        []byte
	rpos        int
	rend        int
	hdec        *h2wire.Decoder
	field       func(int, []byte) // onField, made once
	hs          *Stream           // the stream whose header block is being decoded, if live
	hstatus     int32             // the :status of that block
	hbad        bool              // its :status was malformed, or repeated
	hblock      []byte            // header block being assembled from CONTINUATION frames
	hstream     uint32            // its stream, 0 when none
	hend        bool              // its HEADERS frame ended the stream
	hbytes      int64             // its wire bytes so far
	recvUnack   int64             // DATA bytes received and not yet returned by WINDOW_UPDATE

	dead       bool
	errClass   protocol.ErrClass
	err        error
	goaway     bool
	goawayLast uint32
}

// Which header block the next request sends: the first request inserts
// the request's fields into the server's HPACK table, the later ones refer
// to them. When the server's table shrinks below what they rely on, every
// request is sent as literals.
const (
	hpFirst = iota
	hpSteady
	hpLiteral
)

// OurWindow is the receive window the client gives the server per stream
// and for the connection: 2^30-1, h2load's default (-w 30, -W 30).
const OurWindow = 1<<30 - 1

const readBufSize = 32 << 10

// writeBatch bounds the request body copied into wbuf before a write: a
// large body goes out in writes of about this size.
const writeBatch = 256 << 10

var (
	errAborted      = errors.New("aborted by Close")
	errStreamClosed = errors.New("connection closed")
	aLongTimeAgo    = time.Unix(1, 0)
)

// connError is a connection error (RFC 9113 §5.4.1) the client detected.
type connError struct {
	code   http2.ErrCode
	reason string
}

func (e connError) Error() string { return fmt.Sprintf("protocol error (%v): %s", e.code, e.reason) }

// newConn makes a connection's state: a Dial's (reading into its own
// buffer), or a Fed's (borrowing one per read, frames).
func newConn(d *Dialer, fed bool) *Conn {
	c := &Conn{
		fed:            fed,
		d:              d,
		shared:         d.cfg.Streams > 1,
		nextID:         1,
		blocks:         d.blocks,
		encMax:         h2wire.DefaultTableSize,
		peerMaxFrame:   h2wire.DefaultMaxFrame,
		peerWindow:     h2wire.DefaultWindow,
		peerMaxStreams: 1 << 30,
		sendWindow:     h2wire.DefaultWindow,
		hdec:           h2wire.NewDecoder(h2wire.DefaultTableSize, append([]string{":status"}, d.cfg.Want...)...),
	}
	if fed {
		// A Fed's output is written at the end of each turn: a few frames,
		// grown to what a turn needs. It has no writer to swap with.
		c.wbuf = make([]byte, 0, 512)
	} else {
		c.rbuf = make([]byte, readBufSize)
		c.wbuf, c.spare = make([]byte, 0, 4096), make([]byte, 0, 4096)
	}
	c.field = c.onField
	c.wbuf = h2wire.AppendPreface(c.wbuf, OurWindow)
	return c
}

// handshake sends the preface and our SETTINGS, and reads until the
// server's SETTINGS. The caller has set deadlines on the connection.
func (c *Conn) handshake() *DialError {
	c.mu.Lock()
	defer c.mu.Unlock()
	buf := c.wbuf
	c.wbuf = c.spare[:0]
	c.spare = buf[:0]
	if _, err := c.nc.Write(buf); err != nil {
		return &DialError{Stage: StageSettings, Err: err}
	}
	for !c.gotSettings {
		// The server's preface is a SETTINGS frame (RFC 9113 §3.4):
		// anything else is not HTTP/2, and says what it is.
		if c.rend >= h2wire.FrameHeaderLen && !isSettings(c.rbuf[:c.rend]) {
			return &DialError{Stage: StageSettings, Head: append([]byte(nil), c.rbuf[:min(c.rend, 64)]...)}
		}
		if err := c.processLocked(); err != nil {
			return &DialError{Stage: StageSettings, Protocol: true, Err: err}
		}
		if c.gotSettings {
			break
		}
		c.compact()
		n, err := c.nc.Read(c.rbuf[c.rend:])
		c.rend += n
		if err != nil {
			if c.rend > 0 && c.rend < h2wire.FrameHeaderLen {
				return &DialError{Stage: StageSettings, Head: append([]byte(nil), c.rbuf[:c.rend]...), Err: err}
			}
			return &DialError{Stage: StageSettings, Err: err}
		}
	}
	if len(c.wbuf) > 0 { // our SETTINGS ACK
		if _, err := c.nc.Write(c.wbuf); err != nil {
			return &DialError{Stage: StageSettings, Err: err}
		}
		c.wbuf = c.wbuf[:0]
	}
	return nil
}

// isSettings reports whether b starts with a plausible SETTINGS frame
// header: the first thing a server sends.
func isSettings(b []byte) bool {
	fh := h2wire.ParseFrameHeader(b)
	return fh.Type == http2.FrameSettings && !fh.Flags.Has(http2.FlagSettingsAck) && b[5]&0x7f == 0 && fh.StreamID == 0 &&
		fh.Length%6 == 0 && fh.Length <= h2wire.DefaultMaxFrame
}

// attach adds a Stream for a Dial that joined the connection, or returns
// nil if the connection broke meanwhile.
func (c *Conn) attach(h Handler) *Stream {
	s := newStream(c, h)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dead {
		return nil
	}
	c.streams = append(c.streams, s)
	return s
}

// Usable reports that the connection takes more streams: it has not
// broken, been closed, received GOAWAY or used up its stream IDs.
func (c *Conn) Usable() bool { return !c.broken.Load() }

// Err is why the connection failed, nil while it has not.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// SkipStreamIDs makes the connection's next stream use id (for tests of
// a connection running out of stream IDs).
func (c *Conn) SkipStreamIDs(id uint32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nextID = id
}

// close says goodbye (GOAWAY, RFC 9113 §6.8: "Endpoints SHOULD always send
// a GOAWAY frame before closing a connection") and closes the connection,
// with its last Stream.
func (c *Conn) close() {
	if c.raw == nil { // never connected
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.goodbyeLocked(http2.ErrCodeNo)
	c.failLocked(protocol.Read, errStreamClosed)
}

// goodbyeLocked writes a GOAWAY with code unless a write is in progress
// (it may be stuck on a server that does not read). The last stream ID is
// 0: the client accepts no streams from the server.
func (c *Conn) goodbyeLocked(code http2.ErrCode) {
	if c.dead || c.flushing {
		return
	}
	if c.fed { // the loop writes what is left before it closes the socket
		c.wbuf = h2wire.AppendGoAway(c.wbuf, 0, code)
		return
	}
	c.nc.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	c.nc.Write(h2wire.AppendGoAway(c.spare[:0], 0, code))
}

// failLocked breaks the connection: every stream's wait ends with class
// and Done.
func (c *Conn) failLocked(class protocol.ErrClass, err error) {
	if c.dead {
		return
	}
	var ce connError
	if errors.As(err, &ce) {
		// RFC 9113 §5.4.1: an endpoint that detects a connection error
		// SHOULD first send a GOAWAY with its code.
		c.goodbyeLocked(ce.code)
	}
	c.dead = true
	c.broken.Store(true)
	c.errClass, c.err = class, err
	if c.raw != nil {
		c.raw.Close()
	}
	for _, p := range c.streams {
		p.signalLocked()
	}
}

// flushLocked writes wbuf (see Conn). mu is held on entry and on return.
func (c *Conn) flushLocked(s *Stream, deadline time.Time, yield bool) {
	if c.flushing || len(c.wbuf) == 0 || c.dead {
		return
	}
	c.flushing, c.flusher = true, s
	if yield && c.shared {
		c.mu.Unlock()
		runtime.Gosched() // let the other streams that are ready append their frames
		c.mu.Lock()
	}
	for len(c.wbuf) > 0 && !c.dead {
		buf := c.wbuf
		c.wbuf, c.spare = c.spare[:0], nil
		wdl, setDL := c.writeDeadlineLocked(deadline)
		c.mu.Unlock()
		var err error
		if setDL {
			err = c.nc.SetWriteDeadline(wdl)
		}
		if err == nil && s.closed.Load() {
			err = errAborted
		}
		if err == nil {
			_, err = c.nc.Write(buf)
		}
		c.mu.Lock()
		if cap(buf) <= 2*writeBatch {
			c.spare = buf[:0]
		} else {
			c.spare = make([]byte, 0, 4096) // a large body's buffer is not kept
		}
		if err != nil {
			c.failLocked(protocol.Write, err)
		}
	}
	c.flushing, c.flusher = false, nil
}

// writeGrace is how long past its deadline a flusher may be blocked by a
// peer that does not read. The write deadline only bounds such writes: a
// write that times out breaks the connection, so it must not fire on a
// request that merely started late. Kept between deadline and deadline +
// 2*writeGrace, it is reset about once per writeGrace, not per request.
const writeGrace = time.Second

// writeDeadlineLocked returns the write deadline to set for a flush on
// behalf of a request with this deadline, and whether it must be set.
func (c *Conn) writeDeadlineLocked(deadline time.Time) (time.Time, bool) {
	switch {
	case deadline.IsZero():
		if c.wdlValid && c.wdeadline.IsZero() {
			return time.Time{}, false
		}
	case c.wdlValid && !c.wdeadline.IsZero() && !c.wdeadline.Before(deadline) && c.wdeadline.Before(deadline.Add(2*writeGrace)):
		return c.wdeadline, false
	default:
		deadline = deadline.Add(writeGrace)
	}
	c.wdeadline, c.wdlValid = deadline, true
	return deadline, true
}
