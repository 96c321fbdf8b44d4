package tcp

import (
	"bytes"
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"loadgen/targets/tcpecho"
)

// The bytes read back are the bytes sent, not merely as many.
func TestRREchoesPayload(t *testing.T) {
	s := echoServer(t)
	for _, size := range []int{1, DefaultSize, readBufMax} { // one read buffer holds it all
		d, err := NewDialer(Config{Addr: s.Addr(), Mode: RR, Size: size})
		if err != nil {
			t.Fatal(err)
		}
		c, err := d.Dial(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		rc := c.(*rrConn)
		for range 3 {
			clear(rc.buf)
			if out := rc.Do(context.Background(), time.Now().Add(10*time.Second)); out.Err != 0 {
				t.Fatalf("size %d: Do = %+v", size, out)
			}
			if !bytes.Equal(rc.buf, d.payload) {
				t.Fatalf("size %d: the response differs from the request", size)
			}
		}
		c.Close()
	}
}

func TestFill(t *testing.T) {
	for _, n := range []int{1, 5, 37, 38, 1000, 1 << 20} {
		b := fill(n)
		if len(b) != n {
			t.Fatalf("fill(%d) has %d bytes", n, len(b))
		}
		if b[0] == SinkMagic[0] {
			t.Fatalf("fill(%d) starts like SinkMagic: the target would wait to tell", n)
		}
		if i := bytes.IndexByte(b, 0); i >= 0 {
			t.Fatalf("fill(%d) has a zero byte at %d", n, i)
		}
	}
}

// dialWatched dials a tcpecho target for tcp-rr and returns the connection
// with a channel that receives when the connection's deadline is set in
// the past: when a context's cancellation aborted it.
func dialWatched(t *testing.T) (*rrConn, <-chan struct{}) {
	t.Helper()
	s := echoServer(t)
	nc, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	aborted := make(chan struct{}, 1)
	c := newRRConn(abortSignal{nc, aborted}, fill(100))
	t.Cleanup(func() { c.Close() })
	return c, aborted
}

// abortSignal is a connection that says when its deadline is set to
// aLongTimeAgo.
type abortSignal struct {
	net.Conn
	aborted chan struct{}
}

func (a abortSignal) SetDeadline(d time.Time) error {
	if d.Equal(aLongTimeAgo) {
		select {
		case a.aborted <- struct{}{}:
		default:
		}
	}
	return a.Conn.SetDeadline(d)
}

// A new, live context after a cancelled one works again: the first
// cancellation, once it has aborted the connection, must not stay on it,
// even when the deadline the requests ask for is the same.
func TestRRContextChange(t *testing.T) {
	c, aborted := dialWatched(t)
	deadline := time.Now().Add(10 * time.Second)
	ctx1, cancel1 := context.WithCancel(context.Background())
	if out := c.Do(ctx1, deadline); out.Err != 0 {
		t.Fatalf("Do = %+v", out)
	}
	cancel1()
	select {
	case <-aborted:
	case <-time.After(10 * time.Second):
		t.Fatal("cancelling the context never aborted the connection")
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	if out := c.Do(ctx2, deadline); out.Err != 0 {
		t.Fatalf("Do with a new context = %+v", out)
	}
}

// A cancellable context, then one never cancelled: the watch on the first
// is gone once the connection serves the second, so cancelling the first
// later cannot touch the connection.
func TestRRContextThenBackground(t *testing.T) {
	c, aborted := dialWatched(t)
	ctx := newWatchCtx()
	if out := c.Do(ctx, time.Now().Add(10*time.Second)); out.Err != 0 {
		t.Fatalf("Do = %+v", out)
	}
	if n := ctx.watches(); n != 1 {
		t.Fatalf("%d watches on the run's context, want 1", n)
	}
	if out := c.Do(context.Background(), time.Now().Add(10*time.Second)); out.Err != 0 {
		t.Fatalf("Do = %+v", out)
	}
	if n := ctx.watches(); n != 0 {
		t.Fatalf("%d watches left on a context the connection no longer serves: its cancellation would abort the connection", n)
	}
	ctx.cancel() // runs every watch still registered: none
	if out := c.Do(context.Background(), time.Now().Add(10*time.Second)); out.Err != 0 {
		t.Fatalf("Do after an old context was cancelled = %+v", out)
	}
	select {
	case <-aborted:
		t.Fatal("the old context's cancellation aborted the connection")
	default:
	}
}

// watchCtx is a context that counts the functions context.AfterFunc
// registered on it and has not stopped (context.AfterFunc uses a
// context's own AfterFunc method when it has one).
type watchCtx struct {
	done chan struct{}
	mu   sync.Mutex
	fs   map[int]func()
	next int
	err  error
}

func newWatchCtx() *watchCtx { return &watchCtx{done: make(chan struct{}), fs: map[int]func(){}} }

func (c *watchCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *watchCtx) Done() <-chan struct{}       { return c.done }
func (c *watchCtx) Value(any) any               { return nil }

func (c *watchCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *watchCtx) AfterFunc(f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	id := c.next
	c.next++
	c.fs[id] = f
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := c.fs[id]
		delete(c.fs, id)
		return ok
	}
}

func (c *watchCtx) watches() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.fs)
}

func (c *watchCtx) cancel() {
	c.mu.Lock()
	c.err = context.Canceled
	close(c.done)
	fs := c.fs
	c.fs = nil
	c.mu.Unlock()
	for _, f := range fs {
		f()
	}
}

// echoServer starts loadgen's TCP target (echo and sink) on a free
// loopback port, closed when the test ends.
func echoServer(t *testing.T) *tcpecho.Server {
	t.Helper()
	s, err := tcpecho.New(tcpecho.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
