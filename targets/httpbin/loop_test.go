//go:build linux

package httpbin

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The event loops answer exactly as fasthttp does: the same bytes sent to
// a server with loops and to one with a goroutine per connection (fasthttp
// alone) get the same bytes back, the Date aside.

// pair is a server with loops and one without, configured alike.
type pair struct{ loops, fast *Server }

func startPair(t testing.TB, cfg Config) pair {
	t.Helper()
	p := pair{}
	for _, loops := range []bool{true, false} {
		s, err := newServer(cfg, loops)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		if loops {
			p.loops = s
		} else {
			p.fast = s
		}
	}
	return p
}

// exchange sends parts to s, pausing between them, closes its writing
// side and returns all s answered until it closed the connection.
func exchange(t testing.TB, s *Server, parts ...string) []byte {
	t.Helper()
	return exchangeWith(t, &net.Dialer{}, s, 0, parts...)
}

// slowExchange is exchange by a client whose socket holds little and who
// starts reading only after a while: the server's answers wait for room.
func slowExchange(t testing.TB, s *Server, parts ...string) []byte {
	t.Helper()
	d := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
		return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	return exchangeWith(t, d, s, 100*time.Millisecond, parts...)
}

func exchangeWith(t testing.TB, d *net.Dialer, s *Server, wait time.Duration, parts ...string) []byte {
	t.Helper()
	c, err := d.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	for i, p := range parts {
		if i > 0 {
			time.Sleep(2 * time.Millisecond)
		}
		if _, err := io.WriteString(c, p); err != nil {
			break // the server may have closed it (Connection: close)
		}
	}
	c.(*net.TCPConn).CloseWrite()
	time.Sleep(wait)
	b, err := io.ReadAll(c)
	if err != nil && !isReset(err) {
		t.Fatalf("read: %v (after %d bytes)", err, len(b))
	}
	return b
}

func isReset(err error) bool { return strings.Contains(err.Error(), "connection reset") }

var dateLine = regexp.MustCompile(`(?m)^Date: [^\r]*\r$`)

func undated(b []byte) string { return dateLine.ReplaceAllString(string(b), "Date: *\r") }

// same fails unless both servers of p answer parts alike, and the loop
// handed the connection over to fasthttp as told.
func (p pair) same(t *testing.T, handover bool, parts ...string) {
	t.Helper()
	before := p.loops.adopted.Load()
	got, want := undated(exchange(t, p.loops, parts...)), undated(exchange(t, p.fast, parts...))
	if got != want {
		t.Errorf("sent %q\nloops:    %.600q\nfasthttp: %.600q", parts, got, want)
	}
	if over := p.loops.adopted.Load() != before; over != handover {
		t.Errorf("handed over to fasthttp: %v, want %v", over, handover)
	}
}

const get = "GET /bytes/5 HTTP/1.1\r\nHost: x\r\n\r\n"

func TestLoopAnswersAsFasthttp(t *testing.T) {
	p := startPair(t, Config{MaxBytes: 1 << 20, MaxDelay: 10 * time.Millisecond})
	for _, tc := range []struct {
		name     string
		handover bool // to fasthttp: the loop does not answer it all
		parts    []string
	}{
		{"bytes", false, []string{get}},
		{"bytes 0", false, []string{"GET /bytes/0 HTTP/1.1\r\nHost: x\r\n\r\n"}},
		{"bytes big", false, []string{"GET /bytes/1048576 HTTP/1.1\r\nHost: x\r\n\r\n"}},
		{"bytes over max", false, []string{"GET /bytes/1048577 HTTP/1.1\r\nHost: x\r\n\r\n"}},
		{"bytes query", false, []string{"GET /bytes/7?a=1&b=%20 HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\nAccept: */*\r\n\r\n"}},
		{"head", false, []string{"HEAD /bytes/5 HTTP/1.1\r\nHost: x\r\n\r\n"}},
		{"head status", false, []string{"HEAD /status/201 HTTP/1.1\r\nHost: x\r\n\r\n"}},
		{"healthz", false, []string{"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"}},
		{"stats", false, []string{"GET /stats HTTP/1.1\r\nHost: x\r\n\r\n"}},
		{"not found", false, []string{"GET /nothing HTTP/1.1\r\nHost: x\r\n\r\n"}},
		{"not allowed", false, []string{"GET /post HTTP/1.1\r\nHost: x\r\n\r\n"}},
		{"close", false, []string{"GET /bytes/5 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" + get}},
		{"close big", false, []string{"GET /bytes/1000000 HTTP/1.1\r\nHost: x\r\nConnection: Close\r\n\r\n" + get}},
		{"keep-alive", false, []string{"GET /bytes/5 HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n"}},
		{"pipelined", false, []string{strings.Repeat(get, 5) + "GET /status/418 HTTP/1.1\r\nHost: x\r\n\r\n" + get}},
		{"pipelined big", false, []string{strings.Repeat("GET /bytes/300000 HTTP/1.1\r\nHost: x\r\n\r\n", 8) + get}},
		{"in pieces", false, []string{"GE", "T /bytes/5 HT", "TP/1.1\r", "\nHost: x\r\n", "\r", "\n" + get[:10], get[10:]}},
		{"then an echo", true, []string{get + "GET /get?a=1 HTTP/1.1\r\nHost: x\r\nX-A: b\r\n\r\n" + get}},
		{"then a post", true, []string{get, "POST /post HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc" + get}},
		{"then a delay", true, []string{get + "GET /delay/1ms HTTP/1.1\r\nHost: x\r\n\r\n" + get}},
		{"then HTTP/1.0", true, []string{get + "GET /bytes/5 HTTP/1.0\r\n\r\n"}},
		{"no host", true, []string{"GET /bytes/5 HTTP/1.1\r\n\r\n"}},
		{"two hosts", true, []string{"GET /bytes/5 HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n"}},
		{"empty host", true, []string{"GET /bytes/5 HTTP/1.1\r\nHost:\r\n\r\n"}},
		{"escaped path", true, []string{"GET /bytes/%35 HTTP/1.1\r\nHost: x\r\n\r\n"}},
		{"dot segments", true, []string{"GET /x/../bytes/5 HTTP/1.1\r\nHost: x\r\n\r\n"}},
		{"double slash", true, []string{"GET //bytes/5 HTTP/1.1\r\nHost: x\r\n\r\n"}},
		{"absolute form", true, []string{"GET http://x/bytes/5 HTTP/1.1\r\nHost: x\r\n\r\n"}},
		{"upgrade", true, []string{"GET /bytes/5 HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"}},
		{"expect", true, []string{"GET /bytes/5 HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n\r\n"}},
		{"chunked", true, []string{"GET /bytes/5 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"}},
		{"folded", true, []string{"GET /bytes/5 HTTP/1.1\r\nHost: x\r\nX-A: b\r\n c\r\n\r\n"}},
		{"bare LF", true, []string{"GET /bytes/5 HTTP/1.1\nHost: x\n\n"}},
		{"garbage", true, []string{"\x00\x01\x02 hello\r\n\r\n"}},
		{"cut short", true, []string{"GET /bytes/5 HTTP/1.1\r\nHos"}},
		{"huge head", true, []string{"GET /bytes/5 HTTP/1.1\r\nHost: x\r\nX-A: " + strings.Repeat("a", 20<<10) + "\r\n\r\n"}},
		{"large head", false, []string{"GET /bytes/5 HTTP/1.1\r\nHost: x\r\nX-A: " + strings.Repeat("a", 7<<10) + "\r\n\r\n"}},
		{"PRI but HTTP/1", true, []string{"PRI * HTTP/1.1\r\nHost: x\r\n\r\n"}},
		{"preface cut short", false, []string{preface[:10]}},
	} {
		t.Run(tc.name, func(t *testing.T) { p.same(t, tc.handover, tc.parts...) })
	}
}

// TestLoopSlowReader checks that answers the socket cannot take at once wait,
// in order, behind them the requests read meanwhile, and the connection is
// closed or handed over only once they are written.
func TestLoopSlowReader(t *testing.T) {
	p := startPair(t, Config{MaxBytes: 16 << 20})
	const big = "GET /bytes/1048576 HTTP/1.1\r\nHost: x\r\n\r\n"
	for _, tc := range []struct {
		name     string
		handover bool
		req      string
	}{
		{"big, pipelined", false, strings.Repeat(big, 8) + get},
		{"huge", false, "GET /bytes/16777216 HTTP/1.1\r\nHost: x\r\n\r\n" + get}, // more than a socket holds
		{"small, many", false, strings.Repeat(get, 2000)},
		{"big, then close", false, strings.Repeat(big, 6) + "GET /bytes/1048576 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" + get},
		{"small, then close", false, strings.Repeat(get, 2000) + "GET /bytes/5 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" + get},
		{"big, then an echo", true, strings.Repeat(big, 6) + "GET /get HTTP/1.1\r\nHost: x\r\n\r\n" + get},
		{"small, then an echo", true, strings.Repeat(get, 2000) + "GET /get HTTP/1.1\r\nHost: x\r\n\r\n" + get},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := p.loops.adopted.Load()
			got, want := undated(slowExchange(t, p.loops, tc.req)), undated(exchange(t, p.fast, tc.req))
			if got != want {
				t.Errorf("loops answered %d bytes, fasthttp %d; first difference at %d", len(got), len(want), firstDiff(got, want))
			}
			if over := p.loops.adopted.Load() != before; over != tc.handover {
				t.Errorf("handed over to fasthttp: %v, want %v", over, tc.handover)
			}
		})
	}
}

func firstDiff(a, b string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// TestLoopStatusHeads checks that every status, answered to GET and HEAD, on
// one connection.
func TestLoopStatusHeads(t *testing.T) {
	p := startPair(t, Config{})
	var b strings.Builder
	for code := 200; code <= 599; code++ {
		fmt.Fprintf(&b, "GET /status/%d HTTP/1.1\r\nHost: x\r\n\r\nHEAD /status/%d HTTP/1.1\r\nHost: x\r\n\r\n", code, code)
	}
	p.same(t, false, b.String())
}

// TestLoopCounts checks that what the loop answers is counted as fasthttp
// counts it.
func TestLoopCounts(t *testing.T) {
	p := startPair(t, Config{})
	reqs := strings.Repeat(get+"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /status/503 HTTP/1.1\r\nHost: x\r\n\r\n", 10)
	p.same(t, false, reqs+"GET /stats HTTP/1.1\r\nHost: x\r\n\r\n")
	if p.loops.Served() != 20 || p.fast.Served() != 20 {
		t.Errorf("served %d with loops, %d without; want 20", p.loops.Served(), p.fast.Served())
	}
}

func TestLoopH2c(t *testing.T) {
	s := start(t, Config{})
	c := h2cClient(s)
	defer c.close()
	if r := do(t, c, "GET", "/bytes/100", nil); r.status != 200 || len(r.body) != 100 || r.proto != "HTTP/2.0" {
		t.Fatalf("h2c: %d, %d bytes, %s", r.status, len(r.body), r.proto)
	}
}

// FuzzLoopAnswersAsFasthttp checks that, whatever a client sends, in one
// write or two, a server with loops answers it byte for byte as fasthttp
// alone does (the Date aside).
func FuzzLoopAnswersAsFasthttp(f *testing.F) {
	for _, s := range []string{
		get,
		strings.Repeat(get, 3) + "GET /get HTTP/1.1\r\nHost: x\r\n\r\n",
		"HEAD /status/304 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		"GET /stats HTTP/1.1\r\nHost: x\r\n\r\nGET /nothing HTTP/1.1\r\nHost: x\r\n\r\n",
		"POST /anything HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nab" + get,
		preface[:9],
	} {
		f.Add([]byte(s), uint16(len(s)/2))
	}
	p := startPair(f, Config{MaxBytes: 1 << 20, MaxDelay: 5 * time.Millisecond, MaxBody: 1 << 10})
	f.Fuzz(func(t *testing.T, data []byte, split uint16) {
		if bytes.HasPrefix(data, []byte(preface)) {
			// Both servers give it to net/http's h2c (TestSniff), whose
			// answer to a client that hangs up at once is a race of its
			// own: its SETTINGS may go out before it sees the end, or not.
			return
		}
		k := int(split) % (len(data) + 1)
		parts := []string{string(data[:k]), string(data[k:])}
		got, want := undated(exchange(t, p.loops, parts...)), undated(exchange(t, p.fast, parts...))
		if got != want {
			t.Fatalf("sent %q\nloops:    %.600q\nfasthttp: %.600q", parts, got, want)
		}
	})
}
