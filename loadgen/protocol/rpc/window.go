package rpc

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"

	"loadgen/loadgen/protocol"
)

// A pipelined window (Config.Window > 1, Stream mode): Window Conns share
// one ping-pong stream, each Do sending one message and taking the reply
// to it, so that up to Window messages are in flight on the stream. The
// server answers a stream's messages in order: the Do that sent the k-th
// message takes the k-th reply. It runs on grpc-go's client, whose stream
// takes one sender and one receiver at once.

// window is one stream shared by its Conns.
type window struct {
	st     grpc.ClientStream
	cancel context.CancelFunc

	sendMu sync.Mutex // one SendMsg at a time; sent is the next ticket
	sent   uint64

	broken  atomic.Bool  // the stream failed: every Conn on it is done
	expired atomic.Bool  // a deadline broke it
	conns   atomic.Int32 // Conns not closed yet

	mu   sync.Mutex // guards next; held by the receiver in turn, so only Do waits on it
	turn sync.Cond  // on mu: the next reply's ticket changed, or the stream broke
	next uint64     // the ticket of the next reply
}

// windowConn is one Conn of a window.
type windowConn struct {
	c *libConn // its channel, context and reply
	w *window
}

// dialWindow returns a Conn on the channel's current window, opening a
// stream every Window Conns, and when the current one broke (the Conns
// that were on it dial anew).
func (d *libraryDialer) dialWindow(ctx context.Context, c *libConn) (protocol.Conn, error) {
	d.winMu.Lock()
	defer d.winMu.Unlock()
	w := d.win
	if w == nil || w.broken.Load() || d.winConns == d.s.Window || d.winCh != c.ch {
		sctx, cancel := context.WithCancel(d.ctx)
		stop := context.AfterFunc(ctx, cancel)
		st, err := c.ch.cc.NewStream(sctx, &pingPongDesc, d.method)
		if !stop() && err == nil {
			err = ctx.Err()
		}
		if err != nil {
			cancel()
			return nil, fmt.Errorf("grpc: opening a ping-pong stream on %s: %w", d.s.Target, err)
		}
		w = &window{st: st, cancel: cancel}
		w.turn.L = &w.mu
		d.win, d.winConns, d.winCh = w, 0, c.ch
	}
	d.winConns++
	w.conns.Add(1)
	return &windowConn{c: c, w: w}, nil
}

// Do sends one message and takes the reply to it, until deadline: past it
// the stream is cancelled, and every Conn on it is done.
func (wc *windowConn) Do(ctx context.Context, deadline time.Time) protocol.Outcome {
	c, w := wc.c, wc.w
	if ctx != c.linked {
		c.link(ctx, w.cancel)
	}
	dead := protocol.Outcome{Err: protocol.Read, Done: true}
	w.sendMu.Lock()
	if w.broken.Load() || c.ctx.Err() != nil {
		w.sendMu.Unlock()
		// Not sent: the engine sends it again on a new stream.
		return protocol.Outcome{Err: protocol.Read, Done: true, Unsent: true}
	}
	ticket := w.sent
	w.sent++
	err := w.st.SendMsg(&c.d.req)
	w.sendMu.Unlock()
	if err != nil && err != io.EOF { // io.EOF: the stream ended; RecvMsg says how
		w.fail()
		return dead
	}
	var timer *time.Timer
	expired := false
	if !deadline.IsZero() {
		left := time.Until(deadline)
		if left <= 0 {
			w.fail()
			return protocol.Outcome{Err: protocol.Timeout, Done: true}
		}
		timer = time.AfterFunc(left, w.expire)
	}
	w.mu.Lock()
	for w.next != ticket && !w.broken.Load() {
		w.turn.Wait()
	}
	if w.broken.Load() {
		w.mu.Unlock()
		if timer != nil {
			timer.Stop()
		}
		if w.expired.Load() { // its stream's deadline passed: it was in flight as long
			return protocol.Outcome{Err: protocol.Timeout, Done: true, Written: c.d.written}
		}
		return dead
	}
	c.reply.reset()
	err = w.st.RecvMsg(&c.reply)
	w.next++
	if err != nil {
		w.broken.Store(true)
	}
	w.turn.Broadcast()
	w.mu.Unlock()
	if timer != nil && !timer.Stop() || err != nil && w.expired.Load() {
		expired = true
	}
	o := c.outcome(err, expired)
	if expired || o.Err != protocol.None {
		o.Done = true
		w.fail()
	}
	return o
}

// expire breaks the stream at a message's deadline: the messages in flight
// on it are timeouts.
func (w *window) expire() {
	w.expired.Store(true)
	w.fail()
}

// fail breaks the stream: it is cancelled, and every Conn on it is done.
func (w *window) fail() {
	w.cancel()
	w.broken.Store(true)
	w.mu.Lock()
	w.turn.Broadcast()
	w.mu.Unlock()
}

// Close releases the Conn; the stream ends with its last one.
func (wc *windowConn) Close() error {
	if wc.w.conns.Add(-1) == 0 {
		wc.w.cancel()
	}
	return wc.c.Close()
}
