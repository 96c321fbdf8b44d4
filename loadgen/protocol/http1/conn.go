package http1

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"loadgen/loadgen/protocol"
)

// readBufSize is the per-connection read buffer. A response's status line and
// headers must fit in it (nginx's default limit is 8 KiB), else the response
// is a Protocol error; bodies up to this size are skipped inside it.
const readBufSize = 16 << 10

// bigReadSize is the read size for the rest of a body longer than that: such
// a body is read straight from the socket in reads this big, into a buffer
// the conn allocates the first time it needs it (1 MiB in 16 reads, not 64).
const bigReadSize = 64 << 10

// Read buffers are borrowed, not owned. On plain TCP a connection waits for
// its answer without one (the poller says when the socket is readable) and
// takes a buffer from a pool only to parse what arrived, so ten thousand
// connections waiting on a slow target hold a handful of buffers, not ten
// thousand. Over TLS it borrows one for each response too: a connection
// per request (--new-conn) then does not cost 16 KiB of garbage each. sync.Pool is per processor: borrowing is uncontended, and
// allocates only after a garbage collection emptied the pool.
var (
	readers  = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufSize) }}
	scratchs = sync.Pool{New: func() any { return new([bigReadSize]byte) }}
)

// conn is one keep-alive HTTP/1.1 connection. Everything Do touches is owned
// by the conn and reused, or borrowed from a pool and given back, so a
// request on an established connection allocates nothing.
type conn struct {
	raw    net.Conn             // the TCP connection; closing it aborts any Do in progress
	rw     net.Conn             // what requests go through: raw, or a *tls.Conn over it
	fc     *protocol.FlightConn // under the *tls.Conn: the first request's write waits for its read
	req    []byte               // the request, shared read-only with the Dialer
	head   bool
	vary   *varying       // the request to render, when it has fields
	vars   *protocol.Vars // the Dialer's: the values fields share
	buf    []byte         // what vary renders into, kept
	mix    *list          // the Dialer's request mix, if any: Pick sets req and head from it
	cr     countingReader
	br     *bufio.Reader // borrowed while a response is read
	resp   fasthttp.Response
	closed atomic.Bool
	timed  bool                // a deadline is set on rw
	ok     *protocol.StatusSet // the Dialer's: the statuses of a success
}

var (
	_ protocol.Conn   = (*conn)(nil)
	_ protocol.Picker = (*conn)(nil)
)

func newConn(raw, rw net.Conn, d *Dialer) *conn {
	c := &conn{raw: raw, rw: rw, req: d.req, head: d.head, vary: d.vary, vars: d.vars, mix: d.mix, ok: &d.ok}
	c.cr.r = rw
	if tc, ok := rw.(*net.TCPConn); ok {
		if rc, err := tc.SyscallConn(); err == nil {
			c.cr.rc = rc
			c.cr.readFn, c.cr.writeWaitFn = c.cr.readFD, c.cr.writeWaitFD
		}
	}
	// The header is parsed by fasthttp; the body is consumed here (skipped in
	// the read buffer, or streamed through drain) and never kept.
	c.resp.SkipBody = true
	c.resp.StreamBody = true
	c.resp.Header.DisableNormalizing()
	return c
}

// Pick makes request i of the Dialer's mix the one Do sends
// (protocol.Picker).
func (c *conn) Pick(i int) { c.req, c.vary, c.head = c.mix.reqs[i], c.mix.varys[i], c.mix.heads[i] }

// Do sends the request and reads the whole response. ctx is not watched on
// the hot path: the engine aborts a Do in progress with Close.
func (c *conn) Do(_ context.Context, deadline time.Time) protocol.Outcome {
	if !deadline.IsZero() {
		c.rw.SetDeadline(deadline) //nolint:errcheck // a closed conn fails the write below
		c.timed = true
	} else if c.timed {
		c.rw.SetDeadline(time.Time{}) //nolint:errcheck
		c.timed = false
	}
	c.cr.n, c.cr.err = 0, nil
	if c.vary != nil {
		c.buf = c.vary.render(c.buf, c.vars)
		c.req = c.buf
	}

	var o protocol.Outcome
	if c.cr.rc != nil && len(c.req) <= pollWriteMax {
		// Write the request and wait for the answer inside one poller
		// call (see countingReader.writeWaitFD), holding no buffer.
		c.cr.pending, c.cr.wn, c.cr.werr = c.req, 0, nil
		err := c.cr.rc.Read(c.cr.writeWaitFn)
		if c.cr.pending != nil || c.cr.werr != nil {
			o.Written = int64(c.cr.wn)
			werr := c.cr.werr
			if werr == nil {
				werr = err
			}
			c.cr.pending, c.cr.wn = nil, 0
			cls := protocol.Write // the request did not leave: a write error
			if isTimeout(werr) {
				cls = protocol.Timeout
			}
			return protocol.Outcome{Err: cls, Done: true, Written: o.Written}
		}
		o.Written, c.cr.wn = int64(c.cr.wn), 0
		if err != nil {
			c.cr.err = err
			return protocol.Outcome{Err: c.class(err, protocol.Read), Done: true, Written: o.Written}
		}
	} else {
		n, err := c.rw.Write(c.req)
		if err != nil {
			return protocol.Outcome{Err: c.class(err, protocol.Write), Done: true, Bytes: c.cr.n, Written: int64(n)}
		}
		o.Written = int64(n)
	}
	c.borrow()
	status, err := c.read()
	c.release(err != nil)
	o.Bytes = c.cr.n
	o.Status = int32(status)
	switch {
	case err != nil:
		o.Err = c.class(err, protocol.Protocol)
		o.Done = true
		if o.Err == protocol.Write { // held for the read, it did not leave
			o.Written = 0
		}
	case c.ok.Failed(status):
		o.Err = protocol.Status
	}
	if c.resp.Header.ConnectionClose() || status == fasthttp.StatusSwitchingProtocols {
		o.Done = true
	}
	return o
}

// read reads one response: fasthttp parses the status line and headers (and
// skips interim 1xx responses), then the body is consumed without keeping it.
// It returns the status code, or 0 if the header could not be read.
func (c *conn) read() (int, error) {
	if err := c.resp.ReadLimitBody(c.br, 0); err != nil {
		return 0, err
	}
	status := c.resp.StatusCode()
	if c.head || status < 200 || status == fasthttp.StatusNoContent || status == fasthttp.StatusNotModified {
		return status, nil
	}
	if cl := c.resp.Header.ContentLength(); cl >= 0 {
		return status, c.discard(cl)
	}
	// Chunked (-1) or delimited by the connection's end (-2, which fasthttp
	// marks Connection: close): let fasthttp's body stream do the framing.
	if err := c.resp.ReadBody(c.br, 0); err != nil {
		return status, err
	}
	body := c.resp.BodyStream()
	buf := scratchs.Get().(*[bigReadSize]byte)
	defer scratchs.Put(buf)
	for {
		_, err := body.Read(buf[:])
		if err == io.EOF {
			break
		}
		if err != nil {
			return status, err
		}
	}
	return status, c.resp.CloseBodyStream()
}

// borrow takes a read buffer for the response that arrived.
func (c *conn) borrow() {
	if c.br == nil {
		c.br = readers.Get().(*bufio.Reader)
		c.br.Reset(&c.cr)
	}
}

// release gives the read buffer back once nothing is left in it (a peer
// that sent more than one response keeps it lent), or when the connection
// is done for.
func (c *conn) release(done bool) {
	if c.br == nil || (c.br.Buffered() > 0 && !done) {
		return
	}
	c.br.Reset(nil)
	readers.Put(c.br)
	c.br = nil
}

// discard skips an n-byte body. What does not fit the read buffer is read
// straight from the socket in big reads, never past the body's end.
func (c *conn) discard(n int) error {
	if n <= readBufSize || n <= c.br.Buffered() {
		_, err := c.br.Discard(n)
		return err
	}
	n -= c.br.Buffered()
	c.br.Discard(c.br.Buffered()) //nolint:errcheck // discarding what is buffered cannot fail
	big := scratchs.Get().(*[bigReadSize]byte)
	defer scratchs.Put(big)
	for n > 0 {
		m, err := c.cr.Read(big[:min(n, len(big))])
		n -= m
		if err == io.EOF && n > 0 {
			return io.ErrUnexpectedEOF
		}
		if err != nil && n > 0 {
			return err
		}
	}
	return nil
}

// class names a failure: a deadline hit is Timeout whatever the stage; an
// error of the socket itself is Read (or Write, the caller's default for the
// write); anything else is the caller's default (Protocol for a response
// that arrived but did not parse).
func (c *conn) class(err error, def protocol.ErrClass) protocol.ErrClass {
	if isTimeout(err) || isTimeout(c.cr.err) {
		return protocol.Timeout
	}
	if c.fc != nil && c.fc.WriteErr != nil {
		return protocol.Write // the request, held for the read, did not leave
	}
	if c.cr.err != nil {
		return protocol.Read
	}
	return def
}

func isTimeout(err error) bool {
	return err != nil && (errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, fasthttp.ErrTimeout))
}

// Close closes the connection. It may be called while Do runs in another
// goroutine (Do then returns a Read or Write error at once) and more than
// once (later calls do nothing). A TLS connection is closed without
// close_notify, so Close never waits on the peer.
func (c *conn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	return c.raw.Close()
}

// pollWriteMax is the largest request written from inside the first read;
// bigger ones are written with a plain Write first.
const pollWriteMax = 8 << 10

// errShortWrite reports that the socket took only part of a small request at
// once.
var errShortWrite = errors.New("short write: the socket's send buffer is full")

// countingReader counts the bytes read from the connection and keeps the
// last socket error, so Do can tell a dead socket from a bad response.
//
// On plain TCP it reads through the poller itself (syscall.RawConn) and
// writes the request from inside the first read: the poller is armed for
// reading before the request leaves, so the answer's arrival cannot be
// missed, and the goroutine parks at once instead of first trying a read
// that fails with EAGAIN (what net.Conn.Write then Read costs). One system
// call less per request, as in wrk's event loop.
type countingReader struct {
	r   net.Conn
	n   int64
	err error

	rc          syscall.RawConn    // nil over TLS
	readFn      func(uintptr) bool // r.readFD, bound once so Read allocates nothing
	writeWaitFn func(uintptr) bool // r.writeWaitFD, likewise
	pending     []byte             // the request, to write before the first read
	wn          int                // bytes of it written
	werr        error              // the write's error
	buf         []byte             // readFD's destination
	rn          int                // readFD's result
	rerr        error              // readFD's error
}

func (r *countingReader) Read(p []byte) (int, error) {
	var n int
	var err error
	if r.rc != nil && len(p) > 0 {
		r.buf = p
		if err = r.rc.Read(r.readFn); err == nil {
			n, err = r.rn, r.rerr
		}
		r.buf = nil
	} else {
		n, err = r.r.Read(p)
	}
	r.n += int64(n)
	if err != nil {
		r.err = err
	}
	return n, err
}

// writeWaitFD is called by the poller with the socket, first right away,
// then each time it is readable; false means "wait, and call again". The
// first call writes the request: the poller is armed for reading before the
// request leaves, so the answer's arrival cannot be missed, and the
// goroutine parks at once instead of first trying a read that fails with
// EAGAIN (what net.Conn.Write then Read costs): one system call less per
// request, as in wrk's event loop. The next call, the socket readable,
// returns at once: the answer is read by readFD into a borrowed buffer.
func (r *countingReader) writeWaitFD(fd uintptr) bool {
	if r.pending == nil {
		return true
	}
	for r.wn < len(r.pending) {
		n, err := syscall.Write(int(fd), r.pending[r.wn:])
		if err == syscall.EINTR {
			continue
		}
		if n > 0 {
			r.wn += n
		}
		if err != nil || n <= 0 {
			r.werr = errShortWrite
			if err != nil && err != syscall.EAGAIN {
				r.werr = os.NewSyscallError("write", err)
			}
			return true
		}
	}
	r.pending = nil
	return false // the answer cannot be there yet: wait for it
}

// readFD reads what the socket holds into r.buf; false means "wait, and
// call again" (called by the poller, like writeWaitFD).
func (r *countingReader) readFD(fd uintptr) bool {
	for {
		n, err := syscall.Read(int(fd), r.buf)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			return false
		case err != nil:
			r.rn, r.rerr = 0, os.NewSyscallError("read", err)
		case n == 0:
			r.rn, r.rerr = 0, io.EOF
		default:
			r.rn, r.rerr = n, nil
		}
		return true
	}
}
