package udp

import (
	"context"
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"loadgen/loadgen/protocol"
)

// rrConn is a udp-rr connection: send a datagram, wait for its echo. Each
// request's datagram starts with its sequence number, so that a late answer
// to an earlier request is not taken for this one's.
type rrConn struct {
	d        *Dialer
	c        *net.UDPConn
	payload  []byte // this connection's copy: its first bytes are the sequence number
	buf      []byte
	seq      uint64
	deadline time.Time // the deadline set on c
}

func newRRConn(d *Dialer, c *net.UDPConn) *rrConn {
	return &rrConn{d: d, c: c, payload: append([]byte(nil), d.payload...), buf: make([]byte, MaxSize+1)}
}

// Do sends one datagram and reads datagrams until its echo. No echo before
// deadline is a Timeout: the datagram, or its echo, was lost.
func (c *rrConn) Do(ctx context.Context, deadline time.Time) protocol.Outcome {
	if ctx.Err() != nil {
		return protocol.Outcome{Err: protocol.Timeout}
	}
	if !deadline.Equal(c.deadline) {
		c.c.SetDeadline(deadline)
		c.deadline = deadline
	}
	c.seq++
	var tag [8]byte
	binary.LittleEndian.PutUint64(tag[:], c.seq)
	k := copy(c.payload, tag[:])
	w, err := c.c.Write(c.payload)
	if err != nil {
		return protocol.Outcome{Err: classify(err, protocol.Write), Done: true, Written: int64(w)}
	}
	c.d.sent.Add(1)
	for {
		n, err := c.c.Read(c.buf)
		if err != nil {
			// A refused port (ICMP) ends the connection; a timeout leaves
			// it usable, its answer may still come (and is skipped).
			class := classify(err, protocol.Read)
			return protocol.Outcome{Err: class, Done: class != protocol.Timeout, Written: int64(w)}
		}
		if n == len(c.payload) && string(c.buf[:k]) == string(c.payload[:k]) {
			c.d.received.Add(1)
			c.d.receivedBytes.Add(int64(n))
			return protocol.Outcome{Bytes: int64(n), Written: int64(w)}
		}
	}
}

// Close closes the socket, aborting a Do in progress.
func (c *rrConn) Close() error { return c.c.Close() }

// streamConn is a udp-stream connection: each Do sends one datagram to an
// open sink and waits for nothing. Close asks the sink its count.
type streamConn struct {
	d         *Dialer
	c         *net.UDPConn
	deadline  time.Time
	sent      atomic.Int64
	closeOnce sync.Once
}

// Do sends one datagram. It returns when the kernel has taken it.
func (c *streamConn) Do(ctx context.Context, deadline time.Time) protocol.Outcome {
	if ctx.Err() != nil {
		return protocol.Outcome{Err: protocol.Timeout}
	}
	if !deadline.Equal(c.deadline) {
		c.c.SetWriteDeadline(deadline)
		c.deadline = deadline
	}
	n, err := c.c.Write(c.d.payload)
	if err != nil {
		return protocol.Outcome{Err: classify(err, protocol.Write), Done: true, Written: int64(n)}
	}
	c.sent.Add(1)
	c.d.sent.Add(1)
	return protocol.Outcome{Written: int64(n)}
}

// Close stops sending and, in the background, asks the sink how many
// datagrams it received from this socket, then closes it; the Dialer's
// Datagrams waits for the answer. It is safe to call more than once.
func (c *streamConn) Close() error {
	c.closeOnce.Do(func() {
		c.d.settling.Add(1)
		go c.settle()
	})
	return nil
}

func (c *streamConn) settle() {
	defer c.d.settling.Done()
	defer c.c.Close()
	a, err := c.d.ask(context.Background(), c.c, controlCount, func(a string) bool {
		_, _, err := parseCount(a)
		return err == nil
	})
	if err != nil {
		c.d.unknown.Add(c.sent.Load())
		return
	}
	n, b, _ := parseCount(a)
	c.d.received.Add(n)
	c.d.receivedBytes.Add(b)
	c.c.Write([]byte(control + controlClose))
}
