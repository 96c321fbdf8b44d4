package httpbin

import (
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"loadgen/internal/allocs"
	"loadgen/internal/race"
)

// chain starts n servers, each calling the next (the last calls none),
// and returns them, the first one first.
func chain(t testing.TB, n int, last Config) []*Server {
	t.Helper()
	out := make([]*Server, n)
	out[n-1] = start(t, last)
	for i := n - 2; i >= 0; i-- {
		out[i] = start(t, Config{Calls: []string{"http://" + out[i+1].Addr()}})
	}
	return out
}

// TestChain checks that a request to the first of three servers is answered
// once the other two answered, each once, and its answer says three hops did.
func TestChain(t *testing.T) {
	srv := chain(t, 3, Config{})
	for _, c := range []client{h1Client(srv[0]), h2cClient(srv[0])} {
		t.Run(c.name, func(t *testing.T) {
			defer c.close()
			before := [3]uint64{srv[0].Served(), srv[1].Served(), srv[2].Served()}
			r := do(t, c, "GET", "/bytes/100?x=1", nil)
			if r.status != 200 || len(r.body) != 100 {
				t.Fatalf("status %d, %d bytes: %s", r.status, len(r.body), r.body)
			}
			if got := r.header.Get(HeaderHops); got != "3" {
				t.Errorf("%s: %q, want 3", HeaderHops, got)
			}
			for i := range srv {
				if n := srv[i].Served() - before[i]; n != 1 {
					t.Errorf("server %d served %d requests, want 1", i+1, n)
				}
			}
			// The method, path and body go down the chain: the last
			// server echoes them, and each answers with its own echo.
			r = do(t, c, "POST", "/post", strings.NewReader("a=1"), "Content-Type", formType)
			if r.status != 200 || r.header.Get(HeaderHops) != "3" || !strings.Contains(string(r.body), `"a": "1"`) {
				t.Errorf("POST through the chain: %d %s %s", r.status, r.header.Get(HeaderHops), r.body)
			}
			// /healthz is each server's own.
			if r := do(t, c, "GET", "/healthz", nil); r.status != 200 || r.header.Get(HeaderHops) != "" {
				t.Errorf("/healthz: %d, hops %q", r.status, r.header.Get(HeaderHops))
			}
		})
	}
}

// brokenHop is a listener that accepts connections and closes them at
// once: a hop that never answers.
func brokenHop(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return ln.Addr().String()
}

// TestChainBrokenHop checks that, when the third hop fails, the first server
// answers 502 with one line naming it, passed up from the second.
func TestChainBrokenHop(t *testing.T) {
	bad := brokenHop(t)
	mid := start(t, Config{Calls: []string{"http://" + bad}})
	first := start(t, Config{Calls: []string{"http://" + mid.Addr()}})
	c := h1Client(first)
	defer c.close()
	r := do(t, c, "GET", "/get", nil)
	body := string(r.body)
	if r.status != 502 || r.header.Get(HeaderHopFailed) != "3" || r.header.Get(HeaderHops) != "2" {
		t.Fatalf("status %d, failed %q, hops %q: %s", r.status, r.header.Get(HeaderHopFailed), r.header.Get(HeaderHops), body)
	}
	if !strings.HasPrefix(body, "hop 3 (GET http://"+bad+"/get) failed: ") || strings.Count(body, "\n") != 1 || !strings.HasSuffix(body, "\n") {
		t.Errorf("body %q: want one line naming hop 3 and its URL", body)
	}

	// A hop that answers an error status fails too.
	leaf := start(t, Config{})
	first = start(t, Config{Calls: []string{"http://" + leaf.Addr() + "/status/503"}})
	c = h1Client(first)
	defer c.close()
	r = do(t, c, "GET", "/get", nil)
	want := "hop 2 (GET http://" + leaf.Addr() + "/status/503) answered 503: \n"
	if r.status != 502 || string(r.body) != want || r.header.Get(HeaderHopFailed) != "2" {
		t.Errorf("status %d: %q, want 502 %q", r.status, r.body, want)
	}
}

// TestChainTimeout checks that a call is bounded by the call timeout; the
// callee is told what is left of it.
func TestChainTimeout(t *testing.T) {
	leaf := start(t, Config{})
	first := start(t, Config{Calls: []string{"http://" + leaf.Addr()}, CallTimeout: 200 * time.Millisecond})
	c := h1Client(first)
	defer c.close()
	r := do(t, c, "GET", "/delay/30s", nil)
	if r.status != 502 || !strings.Contains(string(r.body), "no answer within the call's time") {
		t.Errorf("status %d: %s", r.status, r.body)
	}
	// The callee is told its hop and what is left of the caller's time,
	// at most 200 ms.
	seen := make(chan http.Header, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { seen <- r.Header.Clone() })}
	go hs.Serve(ln)
	t.Cleanup(func() { hs.Close() })
	first = start(t, Config{Calls: []string{"http://" + ln.Addr().String()}, CallTimeout: 200 * time.Millisecond})
	c2 := h1Client(first)
	defer c2.close()
	if r := do(t, c2, "GET", "/get", nil); r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	h := <-seen
	ms, err := strconv.Atoi(h.Get(HeaderTimeout))
	if err != nil || ms < 1 || ms > 200 || h.Get(HeaderHop) != "2" {
		t.Errorf("the callee saw %s %q and %s %q", HeaderTimeout, h.Get(HeaderTimeout), HeaderHop, h.Get(HeaderHop))
	}
}

// TestFanout checks that --fanout N makes N calls per request, spread over
// the URLs, counted where they land.
func TestFanout(t *testing.T) {
	a, b := start(t, Config{}), start(t, Config{})
	for _, tc := range []struct {
		fanout int
		wantA  uint64
		wantB  uint64
	}{{0, 1, 1}, {1, 1, 0}, {4, 2, 2}, {5, 3, 2}} {
		first := start(t, Config{Calls: []string{"http://" + a.Addr(), "http://" + b.Addr()}, Fanout: tc.fanout})
		c := h1Client(first)
		const requests = 20
		a0, b0 := a.Served(), b.Served()
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range requests / 4 {
					if r := do(t, c, "GET", "/bytes/10", nil); r.status != 200 || r.header.Get(HeaderHops) != "2" {
						t.Errorf("fanout %d: %d %q %s", tc.fanout, r.status, r.header.Get(HeaderHops), r.body)
					}
				}
			})
		}
		wg.Wait()
		c.close()
		if ga, gb := a.Served()-a0, b.Served()-b0; ga != tc.wantA*requests || gb != tc.wantB*requests {
			t.Errorf("fanout %d: %d requests made %d and %d calls, want %d and %d", tc.fanout, requests, ga, gb, tc.wantA*requests, tc.wantB*requests)
		}
	}
}

// TestHopRefused checks that a hop number past MaxHops (a chain that calls
// back into itself) is answered 508; a bad one 400.
func TestHopRefused(t *testing.T) {
	s := start(t, Config{})
	c := h1Client(s)
	defer c.close()
	if r := do(t, c, "GET", "/get", nil, HeaderHop, strconv.Itoa(MaxHops+1)); r.status != 508 {
		t.Errorf("hop %d: %d %s", MaxHops+1, r.status, r.body)
	}
	if r := do(t, c, "GET", "/get", nil, HeaderHop, "x"); r.status != 400 {
		t.Errorf("hop x: %d %s", r.status, r.body)
	}
	if r := do(t, c, "GET", "/bytes/1", nil, HeaderHop, "7"); r.status != 200 || r.header.Get(HeaderHops) != "7" {
		t.Errorf("hop 7 at a leaf: %d, hops %q", r.status, r.header.Get(HeaderHops))
	}
}

func TestCallConfigRefused(t *testing.T) {
	for _, cfg := range []Config{
		{Calls: []string{"https://127.0.0.1:1"}},
		{Calls: []string{"127.0.0.1:1"}},
		{Calls: []string{"http://"}},
		{Fanout: 2},
		{Calls: []string{"http://127.0.0.1:1"}, Fanout: -1},
		{Calls: []string{"http://127.0.0.1:1"}, CallTimeout: -1},
	} {
		if err := cfg.Validate(); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v, want a one-line refusal", cfg, err)
		}
	}
}

// TestCallAllocs checks that once warm, a request of a chain — its calls on
// kept connections, on the waiting goroutines past the first — allocates no
// more than one that calls none: nothing (the leaf, in this process,
// counts too).
func TestCallAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are measured without -race (make test)")
	}
	leaf := start(t, Config{MaxBytes: 1 << 10})
	for _, fanout := range []int{1, 3} {
		t.Run("fanout "+strconv.Itoa(fanout), func(t *testing.T) {
			s, err := New(Config{MaxBytes: 1 << 10, Calls: []string{"http://" + leaf.Addr()}, Fanout: fanout})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ctx := fastCtx("/bytes/100")
			run := func() {
				ctx.Response.Reset()
				s.serveFast(ctx)
			}
			for range 100 {
				run()
			}
			if ctx.Response.StatusCode() != 200 || string(ctx.Response.Header.Peek(HeaderHops)) != "2" {
				t.Fatalf("status %d, hops %q: %s", ctx.Response.StatusCode(), ctx.Response.Header.Peek(HeaderHops), ctx.Response.Body())
			}
			if n := allocs.Count(1000, run); n > allocs.Slack {
				t.Errorf("%d allocations in 1000 requests, want 0", n)
			}
		})
	}
}

// CallsAtOnce is the fanout a server runs and serve httpbin prints: the
// one given, else one call to each URL.
func TestCallsAtOnce(t *testing.T) {
	three := []string{"http://127.0.0.1:1", "http://127.0.0.1:2", "http://127.0.0.1:3"}
	for _, tc := range []struct {
		calls  []string
		fanout int
		want   int
	}{
		{nil, 0, 0},
		{nil, 4, 0}, // refused by Validate: no URL to call
		{three[:1], 0, 1},
		{three, 0, 3},
		{three, 1, 1},
		{three, 8, 8},
	} {
		if got := (Config{Calls: tc.calls, Fanout: tc.fanout}).CallsAtOnce(); got != tc.want {
			t.Errorf("%d URLs, fanout %d: CallsAtOnce() = %d, want %d", len(tc.calls), tc.fanout, got, tc.want)
		}
	}
}
