package rpc

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"

	"loadgen/loadgen/protocol/h2wire"
)

// transport is one HTTP/2 connection carrying the gRPC calls of up to
// Streams Conns. Callers write their frames themselves, under wmu, with one
// write per call when flow control allows; one reader goroutine per
// connection reads every frame, hands each stream its messages and status,
// and answers the peer's SETTINGS, PING and flow control.
//
// Lock order: wmu, then mu. The reader never waits for wmu: its frames go
// through ctl and whoever holds wmu writes them.
type transport struct {
	member // in its Dialer's connGroup: connErr says why the handshake failed

	d  *Dialer
	nc net.Conn
	br *bufio.Reader

	wmu       sync.Mutex
	wbuf      []byte // frames being written
	nextID    uint32
	sentFirst bool        // the first header block went out
	first     []byte      // header block of the first request: fills the peer's HPACK table
	next      []byte      // header block of every later request
	ctlQueued atomic.Bool // ctl holds frames

	mu         sync.Mutex
	streams    map[uint32]*stream
	active     uint32 // streams open or reserved
	maxStreams uint32 // the peer's SETTINGS_MAX_CONCURRENT_STREAMS
	sendWin    int64  // connection send window
	initWin    int64  // the peer's initial stream window
	maxFrame   int    // the peer's SETTINGS_MAX_FRAME_SIZE
	tableUsed  uint32 // bytes of the peer's HPACK table the header blocks rely on
	draining   bool   // no new streams: GOAWAY, stream IDs used up, or HPACK table shrunk
	err        error  // the connection is dead, and why
	wake       chan struct{}
	ctl        []byte // control frames for the next writer

	// used by the reader goroutine only
	dec         *h2wire.Decoder
	fields      responseFields
	hblock      []byte // a header block waiting for CONTINUATION
	hstream     uint32 // its stream, 0 when none
	hend        bool   // its HEADERS had END_STREAM
	recvUnacked int    // DATA bytes not yet returned to the peer's window
}

var (
	errGoingAway = errors.New("the connection is going away")
	errAborted   = errors.New("aborted")
)

func newTransport(d *Dialer) *transport {
	return &transport{
		d:          d,
		nextID:     1,
		streams:    make(map[uint32]*stream),
		maxStreams: ^uint32(0),
		sendWin:    h2wire.DefaultWindow,
		initWin:    h2wire.DefaultWindow,
		maxFrame:   h2wire.DefaultMaxFrame,
	}
}

// stream is one HTTP/2 stream of a Conn; a unary Conn reuses it for every
// call, with a new stream ID each time.
type stream struct {
	id    uint32
	done  chan struct{} // the reader signals a message or the end (cap 1)
	check replyCheck

	// guarded by transport.mu
	open       bool  // in transport.streams
	sendWin    int64 // stream send window
	headers    bool  // the response headers came
	httpStatus int
	grpc       bool // content-type application/grpc…
	ended      bool
	grpcStatus int32 // -1 until trailers say
	rst        bool  // reset by the peer
	rstCode    http2.ErrCode
	refused    bool  // above the last stream ID of a GOAWAY: never processed
	connErr    error // the connection failed
	msgs       int   // complete messages not taken yet
	bytes      int64 // their bytes, prefixes included
	verdict    verdict

	// used by the reader goroutine only
	mr          msgReader
	recvUnacked int
}

// begin readies st for a new stream (under transport.mu).
func (st *stream) begin(id uint32, win int64) {
	*st = stream{id: id, done: st.done, check: st.check, open: true, sendWin: win, grpcStatus: -1}
	select { // a signal left by an aborted wait
	case <-st.done:
	default:
	}
}

func (st *stream) signal() {
	select {
	case st.done <- struct{}{}:
	default:
	}
}

// usable reports whether new Conns may join the connection.
func (t *transport) usable() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err == nil && !t.draining
}

// wakeAll wakes callers waiting for flow control or a stream slot (under mu).
func (t *transport) wakeAll() {
	if t.wake != nil {
		close(t.wake)
		t.wake = nil
	}
}

// waitChange waits, after t.mu.Unlock, until wakeAll or abort.
func (t *transport) waitChange(abort <-chan struct{}) error {
	if t.wake == nil {
		t.wake = make(chan struct{})
	}
	w := t.wake
	t.mu.Unlock()
	select {
	case <-w:
		return nil
	case <-abort:
		return errAborted
	}
}

// send writes on st: the request headers first when open is set (giving st
// a new stream ID), then data, with END_STREAM after it when end is set.
// A request that flow control lets through goes out in one write. sending
// is set while the caller waits for or holds the write lock, so that an
// abort can unblock a write the peer does not read.
func (t *transport) send(st *stream, open bool, data []byte, end bool, abort <-chan struct{}, sending *atomic.Bool) error {
	if open {
		if err := t.reserve(abort); err != nil {
			return err
		}
	}
	const batch = 256 << 10 // bytes copied into one write when data is large
	for {
		sending.Store(true)
		t.wmu.Lock()
		t.mu.Lock()
		if t.err != nil {
			err := t.err // the slot went with the connection
			t.mu.Unlock()
			t.wmu.Unlock()
			sending.Store(false)
			return err
		}
		if open {
			if t.draining || t.nextID > h2wire.MaxStreamID {
				t.draining = true
				t.active--
				t.mu.Unlock()
				t.wmu.Unlock()
				sending.Store(false)
				return errGoingAway
			}
			st.begin(t.nextID, t.initWin)
			t.nextID += 2
			t.streams[st.id] = st
		} else if !st.open {
			// The peer ended the stream, maybe before the request was
			// whole: stop it from waiting for the rest. The wait says how
			// the stream ended.
			if len(data) > 0 && !st.rst && t.err == nil {
				t.ctl = h2wire.AppendRSTStream(t.ctl, st.id, http2.ErrCodeCancel)
				t.ctlQueued.Store(true)
			}
			t.mu.Unlock()
			t.wmu.Unlock()
			sending.Store(false)
			t.flushControl()
			return nil
		}
		n := min(int64(len(data)), t.sendWin, st.sendWin, batch)
		n = max(n, 0)
		t.sendWin -= n
		st.sendWin -= n
		maxFrame := t.maxFrame
		b := t.wbuf[:0]
		if t.ctlQueued.Load() { // the reader's acks ride along: no write of their own
			b = append(b, t.ctl...)
			t.ctl = t.ctl[:0]
			t.ctlQueued.Store(false)
		}
		t.mu.Unlock()

		if open {
			block := t.next
			if !t.sentFirst {
				block, t.sentFirst = t.first, true
			}
			b = h2wire.AppendHeaders(b, st.id, end && len(data) == 0, maxFrame, nil, block)
			open = false
		}
		if n > 0 {
			b = h2wire.AppendData(b, st.id, end && int(n) == len(data), maxFrame, data[:n])
			data = data[n:]
		}
		err := t.write(b)
		if cap(b) <= 2*batch {
			t.wbuf = b[:0]
		}
		t.wmu.Unlock()
		sending.Store(false)
		t.flushControl()
		if err != nil || len(data) == 0 {
			return err
		}
		// Wait for the peer to open its window.
		t.mu.Lock()
		if t.err != nil || !st.open || (t.sendWin > 0 && st.sendWin > 0) {
			t.mu.Unlock()
			continue
		}
		if err := t.waitChange(abort); err != nil {
			return err
		}
	}
}

// reserve takes a stream slot, waiting while the peer's
// MAX_CONCURRENT_STREAMS are open.
func (t *transport) reserve(abort <-chan struct{}) error {
	t.mu.Lock()
	for t.active >= t.maxStreams && t.err == nil && !t.draining {
		if err := t.waitChange(abort); err != nil {
			return err
		}
		t.mu.Lock()
	}
	t.active++
	t.mu.Unlock()
	return nil
}

// write writes b; an error kills the connection.
func (t *transport) write(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if _, err := t.nc.Write(b); err != nil {
		err = fmt.Errorf("writing to %s: %w", t.d.s.Target, err)
		t.fail(err)
		return err
	}
	return nil
}

// queue queues a control frame (an ack, a window update, a reset) for the
// next write. The frame is copied: it may be built in a caller's array,
// without allocating.
func (t *transport) queue(frame []byte) {
	t.mu.Lock()
	t.ctl = append(t.ctl, frame...)
	t.ctlQueued.Store(true)
	t.mu.Unlock()
}

// flushControl writes queued control frames unless another goroutine holds
// the write lock; that one writes them when it lets go.
func (t *transport) flushControl() {
	for t.ctlQueued.Load() {
		if !t.wmu.TryLock() {
			return
		}
		t.mu.Lock()
		b := append(t.wbuf[:0], t.ctl...)
		t.ctl = t.ctl[:0]
		t.ctlQueued.Store(false)
		dead := t.err != nil
		t.mu.Unlock()
		if !dead {
			t.write(b)
		}
		t.wbuf = b[:0]
		t.wmu.Unlock()
	}
}

// cancel ends st from the client's side: it leaves the stream table and,
// if the peer had not ended it, is reset.
func (t *transport) cancel(st *stream) {
	t.mu.Lock()
	wasOpen := st.open
	if wasOpen {
		t.closeStream(st)
	}
	id := st.id
	t.mu.Unlock()
	if wasOpen {
		var f [h2wire.FrameHeaderLen + 4]byte
		t.queue(h2wire.AppendRSTStream(f[:0], id, http2.ErrCodeCancel))
		t.flushControl()
	}
}

// closeStream takes st out of the table (under mu).
func (t *transport) closeStream(st *stream) {
	st.open = false
	delete(t.streams, st.id)
	t.active--
	t.wakeAll()
}

// endStream marks st ended by the peer and wakes its caller (under mu).
func (t *transport) endStream(st *stream) {
	st.ended = true
	if st.open {
		t.closeStream(st)
	}
	st.signal()
}

// fail kills the connection: every stream ends with err.
func (t *transport) fail(err error) {
	t.mu.Lock()
	if t.err != nil {
		t.mu.Unlock()
		return
	}
	t.err = err
	for _, st := range t.streams {
		st.connErr = err
		t.endStream(st)
	}
	t.active = 0
	t.wakeAll()
	t.mu.Unlock()
	t.nc.Close()
}

// close says goodbye (GOAWAY) and closes the connection.
func (t *transport) close() {
	if t.nc == nil {
		return
	}
	t.mu.Lock()
	dead := t.err != nil
	t.mu.Unlock()
	if !dead && t.wmu.TryLock() { // a stuck writer holds it: no goodbye then
		t.nc.SetWriteDeadline(time.Now().Add(time.Second))
		t.nc.Write(h2wire.AppendGoAway(t.wbuf[:0], 0, http2.ErrCodeNo))
		t.wmu.Unlock()
	}
	t.fail(errors.New("connection closed"))
}
