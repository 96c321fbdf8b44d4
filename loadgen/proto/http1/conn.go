package http1

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"loadgen/loadgen/proto"
)

// readBufSize is the per-connection read buffer. A response's status line and
// headers must fit in it (nginx's default limit is 8 KiB), else the response
// is a Protocol error; bodies up to this size are skipped inside it.
const readBufSize = 16 << 10

// bigReadSize is the read size for the rest of a body longer than that: such
// a body is read straight from the socket in reads this big, into a buffer
// the conn allocates the first time it needs it (1 MiB in 16 reads, not 64).
const bigReadSize = 64 << 10

// conn is one keep-alive HTTP/1.1 connection. Everything Do touches is owned
// by the conn and reused, so a request on an established connection allocates
// nothing.
type conn struct {
	raw    net.Conn // the TCP connection; closing it aborts any Do in progress
	rw     net.Conn // what requests go through: raw, or a *tls.Conn over it
	req    []byte   // the request, shared read-only with the Dialer
	head   bool
	cr     countingReader
	br     *bufio.Reader
	resp   fasthttp.Response
	closed atomic.Bool
	timed  bool // a deadline is set on rw

	drain [4 << 10]byte // scratch for bodies without Content-Length
	big   []byte        // scratch for long bodies, made on first use
}

var _ proto.Conn = (*conn)(nil)

func newConn(raw, rw net.Conn, d *Dialer) *conn {
	c := &conn{raw: raw, rw: rw, req: d.req, head: d.head}
	c.cr.r = rw
	c.br = bufio.NewReaderSize(&c.cr, readBufSize)
	// The header is parsed by fasthttp; the body is consumed here (skipped in
	// the read buffer, or streamed through drain) and never kept.
	c.resp.SkipBody = true
	c.resp.StreamBody = true
	c.resp.Header.DisableNormalizing()
	return c
}

// Do sends the request and reads the whole response. ctx is not watched on
// the hot path: the engine aborts a Do in progress with Close.
func (c *conn) Do(_ context.Context, deadline time.Time) proto.Outcome {
	if !deadline.IsZero() {
		c.rw.SetDeadline(deadline) //nolint:errcheck // a closed conn fails the write below
		c.timed = true
	} else if c.timed {
		c.rw.SetDeadline(time.Time{}) //nolint:errcheck
		c.timed = false
	}
	c.cr.n, c.cr.err = 0, nil

	n, err := c.rw.Write(c.req)
	if err != nil {
		return proto.Outcome{Err: c.class(err, proto.Write), Done: true, Bytes: c.cr.n, Written: int64(n)}
	}
	o := proto.Outcome{Written: int64(n)}
	status, err := c.read()
	o.Bytes = c.cr.n
	o.Status = int32(status)
	switch {
	case err != nil:
		o.Err = c.class(err, proto.Protocol)
		o.Done = true
	case status >= 400:
		o.Err = proto.Status
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
	for {
		_, err := body.Read(c.drain[:])
		if err == io.EOF {
			break
		}
		if err != nil {
			return status, err
		}
	}
	return status, c.resp.CloseBodyStream()
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
	if c.big == nil {
		c.big = make([]byte, bigReadSize)
	}
	for n > 0 {
		m, err := c.cr.Read(c.big[:min(n, len(c.big))])
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
func (c *conn) class(err error, def proto.ErrClass) proto.ErrClass {
	if isTimeout(err) || isTimeout(c.cr.err) {
		return proto.Timeout
	}
	if c.cr.err != nil {
		return proto.Read
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

// countingReader counts the bytes read from the connection and keeps the
// last socket error, so Do can tell a dead socket from a bad response.
type countingReader struct {
	r   net.Conn
	n   int64
	err error
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.n += int64(n)
	if err != nil {
		r.err = err
	}
	return n, err
}
