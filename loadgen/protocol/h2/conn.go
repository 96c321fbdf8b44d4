package h2

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

// conn is one HTTP/2 connection, shared by the streams (Conns) dialed onto
// it. Everything but the read and write system calls happens under mu.
//
// Reading: the stream that waits first takes the reader role (reading), reads
// and processes frames for every stream, wakes the parked streams whose wait
// is over, and, once its own is over, hands the role to a parked stream
// (handoff) or, when none waits, drops it. With one stream per connection the
// Do goroutine simply reads its own response.
//
// Writing: frames are appended to wbuf; the first stream to flush becomes the
// flusher (flushing) and writes until wbuf stays empty, so the frames of all
// streams ready at once go out in one write. On a shared connection the
// flusher first yields, to let the other ready streams append theirs.
type conn struct {
	d       *Dialer
	pending *atomic.Int32 // the Dials that joined it and have not attached yet (see sharer)
	raw     net.Conn      // the TCP connection: closing it stops everything
	nc      net.Conn      // raw, or the TLS connection over it
	shared  bool          // more than one stream per connection
	broken  atomic.Bool

	mu sync.Mutex

	streams []*stream // attached and not closed

	// write side
	wbuf, spare []byte
	flushing    bool
	flusher     *stream
	wdeadline   time.Time
	wdlValid    bool
	nextID      uint32
	hp          uint8 // hpFirst, hpSteady or hpLiteral
	hpPrefix    []byte

	// the peer's settings and our send windows
	peerMaxFrame   int
	peerWindow     int64 // SETTINGS_INITIAL_WINDOW_SIZE
	peerMaxStreams int
	peerTableSize  uint32
	sendWindow     int64
	active         int // streams in flight
	gotSettings    bool

	// read side: rbuf, rpos, rend and hdec belong to the reader
	reading   bool
	reader    *stream
	handoff   *stream
	rdeadline time.Time // as set on nc, if rdlValid (zero: none)
	rdlValid  bool
	rbuf      []byte
	rpos      int
	rend      int
	hdec      *h2wire.Decoder
	hblock    []byte // header block being assembled from CONTINUATION frames
	hstream   uint32 // its stream, 0 when none
	hend      bool   // its HEADERS frame ended the stream
	hbytes    int64  // its wire bytes so far
	recvUnack int64  // DATA bytes received and not yet returned by WINDOW_UPDATE

	dead       bool
	errClass   protocol.ErrClass
	err        error
	goaway     bool
	goawayLast uint32
}

// Which of the Dialer's header blocks the next request sends: the first
// request inserts the request's fields into the server's HPACK table, the
// later ones refer to them. When the fields do not all fit the server's
// table, every request is sent as literals.
const (
	hpFirst = iota
	hpSteady
	hpLiteral
)

// ourWindow is the receive window we give the server per stream and for the
// connection: 2^30-1, h2load's default (-w 30, -W 30).
const ourWindow = 1<<30 - 1

const readBufSize = 32 << 10

var (
	errAborted      = errors.New("aborted by Close")
	errNotHTTP2     = errors.New("the server answered in HTTP/1.x, not HTTP/2")
	errStreamClosed = errors.New("connection closed")
	errConnGone     = errors.New("connection closed before use")
)

// connError is a connection error (RFC 9113 §5.4.1) the client detected.
type connError struct {
	code   http2.ErrCode
	reason string
}

func (e connError) Error() string { return fmt.Sprintf("protocol error (%v): %s", e.code, e.reason) }

func newConn(d *Dialer, pending *atomic.Int32, raw, nc net.Conn) *conn {
	c := &conn{
		d:              d,
		pending:        pending,
		raw:            raw,
		nc:             nc,
		shared:         d.t.streams > 1,
		nextID:         1,
		peerMaxFrame:   h2wire.DefaultMaxFrame,
		peerWindow:     h2wire.DefaultWindow,
		peerMaxStreams: 1 << 30,
		peerTableSize:  h2wire.DefaultTableSize,
		sendWindow:     h2wire.DefaultWindow,
		rbuf:           make([]byte, readBufSize),
		hdec:           h2wire.NewDecoder(h2wire.DefaultTableSize, ":status"),
		wbuf:           make([]byte, 0, 4096),
		spare:          make([]byte, 0, 4096),
	}
	c.wbuf = h2wire.AppendPreface(c.wbuf, ourWindow)
	if d.blocks.Partial {
		c.hp = hpLiteral // see peerTableSizeLocked for smaller tables
	}
	return c
}

// handshake sends the preface and our SETTINGS, and reads until the
// server's SETTINGS. The caller has set deadlines on the connection.
func (c *conn) handshake() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	buf := c.wbuf
	c.wbuf = c.spare[:0]
	c.spare = buf[:0]
	if _, err := c.nc.Write(buf); err != nil {
		return err
	}
	for !c.gotSettings {
		if err := c.processLocked(); err != nil {
			return err
		}
		if c.gotSettings {
			break
		}
		c.compact()
		n, err := c.nc.Read(c.rbuf[c.rend:])
		c.rend += n
		if err != nil {
			if c.rend == 0 {
				return fmt.Errorf("%w before sending its SETTINGS", err)
			}
			return err
		}
	}
	if len(c.wbuf) > 0 { // our SETTINGS ACK
		if _, err := c.nc.Write(c.wbuf); err != nil {
			return err
		}
		c.wbuf = c.wbuf[:0]
	}
	return nil
}

// attach adds a stream (a Conn) for a Dial that joined the connection.
func (c *conn) attach() (protocol.Conn, error) {
	s := newStream(c)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending.Add(-1)
	if c.dead {
		return nil, errConnGone // not a nil *stream in a non-nil protocol.Conn
	}
	c.streams = append(c.streams, s)
	return s, nil
}

// unusable reports that the connection broke, or was closed: it takes no
// more streams.
func (c *conn) unusable() bool { return c.broken.Load() }

// closeIfUnused closes the connection when no stream uses it or will.
func (c *conn) closeIfUnused() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closeIfUnusedLocked()
}

func (c *conn) closeIfUnusedLocked() {
	if len(c.streams) == 0 && c.pending.Load() == 0 {
		c.failLocked(protocol.Read, errStreamClosed)
	}
}

// failLocked breaks the connection: every stream's Do returns with class
// and Done.
func (c *conn) failLocked(class protocol.ErrClass, err error) {
	if c.dead {
		return
	}
	c.dead = true
	c.broken.Store(true)
	c.errClass, c.err = class, err
	c.raw.Close()
	for _, p := range c.streams {
		p.signalLocked()
	}
}

// flushLocked writes wbuf (see conn). mu is held on entry and on return.
func (c *conn) flushLocked(s *stream, deadline time.Time, yield bool) {
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
		c.spare = buf[:0]
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
func (c *conn) writeDeadlineLocked(deadline time.Time) (time.Time, bool) {
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
