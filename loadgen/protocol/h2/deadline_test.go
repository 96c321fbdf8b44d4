package h2

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"loadgen/loadgen/protocol"
)

// slow is a handler that waits for its request's cancellation or for release.
type slow struct {
	release chan struct{}
	once    sync.Once
	started chan struct{}
	reset   atomic.Int64 // requests whose context ended before release
}

func newSlow() *slow { return &slow{release: make(chan struct{}), started: make(chan struct{}, 100)} }

// free makes every request, waiting or future, answer at once.
func (h *slow) free() { h.once.Do(func() { close(h.release) }) }

func (h *slow) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/slow" {
		return
	}
	select {
	case h.started <- struct{}{}:
	default:
	}
	select {
	case <-h.release:
	case <-r.Context().Done():
		h.reset.Add(1)
	}
}

func TestDeadline(t *testing.T) {
	eachClient(t, func(t *testing.T, cl client) {
		for _, streams := range []int{1, 2, 3} {
			t.Run(fmt.Sprint("streams=", streams), func(t *testing.T) {
				h := newSlow()
				defer h.free()
				s := h2cServer(t, h, false, true)
				d, c := cl.dial(t, Config{URL: s.URL + "/slow", Cleartext: true, Streams: streams})
				for i := 0; i < 2; i++ {
					if o := c.Do(context.Background(), time.Now().Add(50*time.Millisecond)); o.Err != protocol.Timeout || o.Done {
						t.Fatalf("%+v, want Timeout and not Done", o)
					}
				}
				if o := c.Do(context.Background(), time.Now().Add(-time.Second)); o.Err != protocol.Timeout || o.Done {
					t.Fatalf("deadline past: %+v, want Timeout and not Done", o)
				}
				// The server saw the streams reset, and the connection still
				// works: it carries another stream, if it may, and the next
				// request.
				eventually(t, "the server to see the resets", func() bool { return h.reset.Load() >= 2 })
				if streams > 1 {
					other := dialN(t, d, 1)[0]
					if o := other.Do(context.Background(), time.Now().Add(50*time.Millisecond)); o.Err != protocol.Timeout || o.Done {
						t.Fatalf("the other stream: %+v, want Timeout and not Done", o)
					}
				}
				h.free()
				if o := c.Do(context.Background(), soon()); o.Err != protocol.None || o.Status != 200 || o.Done {
					t.Fatalf("after timeouts: %+v", o)
				}
				if got := s.ln.accepted.Load(); got != 1 {
					t.Errorf("%d connections, want 1", got)
				}
			})
		}
	})
}

func TestCloseUnblocksDo(t *testing.T) {
	eachClient(t, func(t *testing.T, cl client) {
		for _, streams := range []int{1, 2} {
			t.Run(fmt.Sprint("streams=", streams), func(t *testing.T) {
				h := newSlow()
				defer h.free()
				s := h2cServer(t, h, false, true)
				cs := dialN(t, cl.dialer(t, Config{URL: s.URL + "/slow", Cleartext: true, Streams: streams}), streams)
				// Every stream waits with no deadline; close them one by one:
				// the reader first, then a parked one.
				done := make(chan protocol.Outcome, streams)
				for _, c := range cs {
					go func() { done <- c.Do(context.Background(), time.Time{}) }()
				}
				for range cs {
					<-h.started
				}
				for i, c := range cs {
					c.Close()
					select {
					case o := <-done:
						if o.Err != protocol.Read || !o.Done {
							t.Errorf("Do aborted by Close: %+v, want Read and Done", o)
						}
					case <-time.After(10 * time.Second):
						t.Fatalf("Close %d did not unblock Do", i)
					}
				}
				eventually(t, "the connection to close", func() bool { return s.ln.open.Load() == 0 })
			})
		}
	})
}

func TestContextEndUnblocksDo(t *testing.T) {
	eachClient(t, func(t *testing.T, cl client) {
		h := newSlow()
		defer h.free()
		s := h2cServer(t, h, false, true)
		_, c := cl.dial(t, Config{URL: s.URL + "/slow", Cleartext: true})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan protocol.Outcome, 1)
		go func() { done <- c.Do(ctx, time.Time{}) }()
		<-h.started
		cancel()
		select {
		case o := <-done:
			if o.Err != protocol.Timeout || o.Done {
				t.Errorf("%+v, want Timeout and not Done", o)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("cancelling the context did not unblock Do")
		}
		if o := c.Do(ctx, soon()); o.Err != protocol.Timeout || o.Done {
			t.Errorf("Do after the run's end: %+v, want Timeout and not Done", o)
		}
	})
}
