package http2

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"loadgen/loadgen/proto"
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
	for _, streams := range []int{1, 3} {
		t.Run(fmt.Sprint("streams=", streams), func(t *testing.T) {
			h := newSlow()
			defer h.free()
			s := h2cServer(t, h, false, true)
			slowCfg := Config{URL: s.URL + "/slow", Cleartext: true, Streams: streams}
			_, c := dial(t, slowCfg)
			for i := 0; i < 2; i++ {
				o := c.Do(context.Background(), time.Now().Add(50*time.Millisecond))
				if o.Err != proto.Timeout || o.Done {
					t.Fatalf("%+v, want Timeout and not Done", o)
				}
			}
			// A deadline already past.
			if o := c.Do(context.Background(), time.Now().Add(-time.Second)); o.Err != proto.Timeout || o.Done {
				t.Fatalf("%+v, want Timeout and not Done", o)
			}
			// The server saw the streams reset, and the connection still works.
			eventually(t, "the server to see the resets", func() bool { return h.reset.Load() >= 2 })
			h.free()
			if o := c.Do(context.Background(), soon()); o.Err != proto.None || o.Status != 200 || o.Done {
				t.Fatalf("after timeouts: %+v", o)
			}
			if got := s.ln.accepted.Load(); got != 1 {
				t.Errorf("%d connections, want 1", got)
			}
		})
	}
}

func TestDeadlineKeepsConnection(t *testing.T) {
	h := newSlow()
	defer h.free()
	mux := http.NewServeMux()
	mux.Handle("/slow", h)
	mux.Handle("/", &recorder{})
	s := h2cServer(t, mux, false, true)
	d, err := NewDialer(Config{URL: s.URL + "/slow", Cleartext: true, Streams: 2})
	if err != nil {
		t.Fatal(err)
	}
	slowConn, err := d.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer slowConn.Close()
	if o := slowConn.Do(context.Background(), time.Now().Add(30*time.Millisecond)); o.Err != proto.Timeout || o.Done {
		t.Fatalf("%+v", o)
	}
	// The same connection carries another stream after the timeout.
	other, err := d.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	o := other.Do(context.Background(), time.Now().Add(30*time.Millisecond))
	if o.Err != proto.Timeout || o.Done {
		t.Fatalf("%+v", o)
	}
	if s.ln.accepted.Load() != 1 {
		t.Fatalf("%d connections", s.ln.accepted.Load())
	}
}

func TestCloseUnblocksDo(t *testing.T) {
	for _, streams := range []int{1, 2} {
		t.Run(fmt.Sprint("streams=", streams), func(t *testing.T) {
			h := newSlow()
			defer h.free()
			s := h2cServer(t, h, false, true)
			d, err := NewDialer(Config{URL: s.URL + "/slow", Cleartext: true, Streams: streams})
			if err != nil {
				t.Fatal(err)
			}
			var cs []proto.Conn
			for i := 0; i < streams; i++ {
				c, err := d.Dial(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				cs = append(cs, c)
			}
			// Every stream waits with no deadline; close them one by one:
			// the reader first, then a parked one.
			done := make(chan proto.Outcome, streams)
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
					if o.Err == proto.None || !o.Done {
						t.Errorf("Do aborted by Close: %+v, want an error and Done", o)
					}
				case <-time.After(10 * time.Second):
					t.Fatalf("Close %d did not unblock Do", i)
				}
			}
		})
	}
}

func TestContextEndUnblocksDo(t *testing.T) {
	h := newSlow()
	defer h.free()
	s := h2cServer(t, h, false, true)
	_, c := dial(t, Config{URL: s.URL + "/slow", Cleartext: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan proto.Outcome, 1)
	go func() { done <- c.Do(ctx, time.Time{}) }()
	<-h.started
	cancel()
	select {
	case o := <-done:
		if o.Err == proto.None {
			t.Errorf("%+v, want an error", o)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancelling the context did not unblock Do")
	}
}
