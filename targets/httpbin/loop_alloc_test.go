//go:build linux

package httpbin

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"loadgen/internal/allocs"
	"loadgen/internal/race"
	"loadgen/targets/evloop"
)

// loopConn is a loop of s driving one end of a socket pair; the test
// holds the other end.
type loopConn struct {
	l    *loop
	c    *hconn
	peer int
	buf  []byte
}

func newLoopConn(t testing.TB, s *Server) *loopConn {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	p, err := evloop.NewPoller(16)
	if err != nil {
		t.Fatal(err)
	}
	l := &loop{s: s, p: p, in: make([]byte, readBufSize), tickLen: time.Hour, sweepAt: time.Now().Add(time.Hour)}
	c := l.conn(fds[0])
	if err := p.Add(fds[0], evloop.Readable, c.index); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		l.closeAll()
		p.Close()
		unix.Close(fds[1])
	})
	return &loopConn{l: l, c: c, peer: fds[1], buf: make([]byte, 1<<20)}
}

// round sends req, has the loop serve its events (a new connection's
// first read stops at the HTTP/2 preface's length) and returns what it
// answered.
func (lc *loopConn) round(t testing.TB, req []byte) []byte {
	if _, err := unix.Write(lc.peer, req); err != nil {
		t.Fatal(err)
	}
	return lc.answer(t)
}

func (lc *loopConn) answer(t testing.TB) []byte {
	for range 4 {
		lc.serve()
		if n, err := unix.Read(lc.peer, lc.buf); err == nil {
			return lc.buf[:n]
		}
	}
	t.Fatal("no answer")
	return nil
}

// serve has the loop serve a readable event of its connection.
func (lc *loopConn) serve() {
	ev := [1]unix.EpollEvent{{Events: unix.EPOLLIN, Fd: int32(lc.c.fd), Pad: lc.c.index}}
	lc.l.handle(ev[:])
}

// TestLoopAllocs checks that once warm, the loop answers its requests — read,
// parse, route, count, the kept head, the write — without allocating.
func TestLoopAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are measured without -race (make test)")
	}
	s, err := newServer(Config{MaxBytes: 1 << 10}, true)
	if err != nil {
		t.Fatal(err)
	}
	const ua = "Host: 127.0.0.1:8080\r\nUser-Agent: loadgen\r\nAccept: */*\r\n\r\n"
	for _, tc := range []struct {
		name, req, want string
	}{
		{"bytes", "GET /bytes/100 HTTP/1.1\r\n" + ua, "HTTP/1.1 200 OK\r\n"},
		{"head", "HEAD /bytes/100 HTTP/1.1\r\n" + ua, "HTTP/1.1 200 OK\r\n"},
		{"status", "GET /status/204 HTTP/1.1\r\n" + ua, "HTTP/1.1 204 No Content\r\n"},
		{"healthz", "GET /healthz HTTP/1.1\r\n" + ua, "HTTP/1.1 200 OK\r\n"},
		{"stats", "GET /stats HTTP/1.1\r\n" + ua, "HTTP/1.1 200 OK\r\n"},
		{"not found", "GET /nothing HTTP/1.1\r\n" + ua, "HTTP/1.1 404 Not Found\r\n"},
		{"pipelined", strings.Repeat("GET /bytes/10 HTTP/1.1\r\n"+ua, 4), "HTTP/1.1 200 OK\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lc := newLoopConn(t, s)
			req := []byte(tc.req)
			run := func() {
				if got := lc.round(t, req); !bytes.HasPrefix(got, []byte(tc.want)) {
					t.Fatalf("answer %.80q, want %q…", got, tc.want)
				}
			}
			run()
			if n := allocs.Count(1000, run); n > allocs.Slack {
				t.Errorf("%d allocations in 1000 requests, want 0", n)
			}
			if s.adopted.Load() != 0 {
				t.Fatal("the loop handed the connection over")
			}
		})
	}
	t.Run("in two reads", func(t *testing.T) {
		lc := newLoopConn(t, s)
		req := []byte("GET /bytes/100 HTTP/1.1\r\n" + ua)
		lc.round(t, req) // sniffed, warm
		if n := allocs.Count(1000, func() {
			unix.Write(lc.peer, req[:20])
			lc.serve()
			if got := lc.round(t, req[20:]); !bytes.HasPrefix(got, []byte("HTTP/1.1 200 OK\r\n")) {
				t.Fatalf("answer %.80q", got)
			}
		}); n > allocs.Slack {
			t.Errorf("%d allocations in 1000 requests, want 0", n)
		}
	})
}

// BenchmarkLoopBytes100 measures one GET /bytes/100 through a loop: read,
// parse, answer, write (the socket pair's cost included).
func BenchmarkLoopBytes100(b *testing.B) {
	s, err := newServer(Config{MaxBytes: 1 << 10}, true)
	if err != nil {
		b.Fatal(err)
	}
	lc := newLoopConn(b, s)
	req := []byte("GET /bytes/100 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: loadgen\r\n\r\n")
	b.ReportAllocs()
	for b.Loop() {
		lc.round(b, req)
	}
}
