package http1

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"loadgen/internal/allocs"
	"loadgen/loadgen/protocol"
)

// feed gives a session the response in pieces of at most step bytes (all
// at once for step 0) and returns the outcome, whether it completed, and
// how many bytes it took.
func feed(s *session, resp []byte, step int) (protocol.Outcome, bool, int) {
	if _, done, o := s.Response(nil); done {
		return o, true, 0
	}
	used := 0
	for used < len(resp) {
		end := len(resp)
		if step > 0 {
			end = min(len(resp), used+step)
		}
		n, done, o := s.Response(resp[used:end])
		used += n
		if done {
			return o, true, used
		}
		if n != end-(used-n) {
			panic("a piece was not all taken before the response completed")
		}
	}
	return protocol.Outcome{}, false, used
}

func TestSessionResponses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		resp   string
		head   bool
		status int32
		err    protocol.ErrClass
		done   bool // Outcome.Done: the connection is over
		open   bool // needs the connection's end to complete
	}{
		{"content-length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", false, 200, protocol.None, false, false},
		{"no reason phrase", "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", false, 200, protocol.None, false, false},
		{"LF only", "HTTP/1.1 200 OK\nContent-Length: 2\n\nhi", false, 200, protocol.None, false, false},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nA;ext=1\r\n0123456789\r\n0\r\n\r\n", false, 200, protocol.None, false, false},
		{"chunked with trailers", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\nX-Sum: 1\r\nX-Other: 2\r\n\r\n", false, 200, protocol.None, false, false},
		{"interim 100", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 1\r\n\r\nx", false, 201, protocol.None, false, false},
		{"HEAD has no body", "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", true, 200, protocol.None, false, false},
		{"204", "HTTP/1.1 204 No Content\r\n\r\n", false, 204, protocol.None, false, false},
		{"304 with a length", "HTTP/1.1 304 Not Modified\r\nContent-Length: 99\r\n\r\n", false, 304, protocol.None, false, false},
		{"error status", "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 3\r\n\r\nbad", false, 503, protocol.Status, false, false},
		{"connection close", "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx", false, 200, protocol.None, true, false},
		{"HTTP/1.0", "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nx", false, 200, protocol.None, true, false},
		{"HTTP/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx", false, 200, protocol.None, false, false},
		{"until close", "HTTP/1.1 200 OK\r\n\r\nall of it", false, 200, protocol.None, true, true},
		{"101", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", false, 101, protocol.None, true, false},
		{"not HTTP", "SSH-2.0-OpenSSH_9.2\r\n\r\n", false, 0, protocol.Protocol, true, false},
		{"bad status", "HTTP/1.1 2x0 OK\r\n\r\n", false, 0, protocol.Protocol, true, false},
		{"two lengths", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxy", false, 200, protocol.Protocol, true, false},
		{"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", false, 200, protocol.Protocol, true, false},
		{"space in a header name", "HTTP/1.1 200 OK\r\nContent Length: 1\r\n\r\n", false, 200, protocol.Protocol, true, false},
	} {
		for _, step := range []int{0, 1, 2, 7} {
			t.Run(fmt.Sprintf("%s/step%d", tc.name, step), func(t *testing.T) {
				s := &session{req: []byte("GET / HTTP/1.1\r\n\r\n"), head: tc.head}
				o, done, used := feed(s, []byte(tc.resp), step)
				if tc.open {
					if done {
						t.Fatalf("completed before the connection's end: %+v", o)
					}
					o, done = s.Closed(), true
				}
				if !done {
					t.Fatalf("not complete after %d bytes", used)
				}
				if o.Err != tc.err || o.Done != tc.done || o.Status != tc.status {
					t.Errorf("outcome %+v, want status %d, err %v, done %v", o, tc.status, tc.err, tc.done)
				}
				if tc.err == protocol.None && !tc.open && (used != len(tc.resp) || o.Bytes != int64(len(tc.resp))) {
					t.Errorf("took %d bytes, counted %d, of %d", used, o.Bytes, len(tc.resp))
				}
				if o.Written != int64(len(s.req)) {
					t.Errorf("written %d, want %d", o.Written, len(s.req))
				}
			})
		}
	}
}

// The next response on the same connection starts from a clean parser,
// and bytes past a response are not taken.
func TestSessionKeepAlive(t *testing.T) {
	s := &session{req: []byte("GET / HTTP/1.1\r\n\r\n")}
	two := []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
	n, done, o := s.Response(two)
	if !done || o.Status != 200 || n != 40 {
		t.Fatalf("first: n %d done %v %+v", n, done, o)
	}
	n2, done, o := s.Response(two[n:])
	if !done || o.Status != 404 || o.Err != protocol.Status || n+n2 != len(two) {
		t.Fatalf("second: n %d done %v %+v", n2, done, o)
	}
}

// A header larger than the limit is a protocol error, not a buffer that
// grows without bound.
func TestSessionHeaderLimit(t *testing.T) {
	s := &session{}
	big := "HTTP/1.1 200 OK\r\nX-Big: " + strings.Repeat("a", 2*maxHeader)
	o, done, _ := feed(s, []byte(big), 1000)
	if !done || o.Err != protocol.Protocol {
		t.Errorf("outcome %+v done %v: want a protocol error", o, done)
	}
	if cap(s.resp.hdr) > 4*maxHeader {
		t.Errorf("header buffer grew to %d", cap(s.resp.hdr))
	}
}

// Parsing a response allocates nothing, in one piece or split.
func TestSessionAllocs(t *testing.T) {
	resp := []byte("HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Length: 100\r\nConnection: keep-alive\r\n\r\n" + strings.Repeat("x", 100))
	s := &session{}
	for _, step := range []int{0, 10} {
		feed(s, resp, step) // the first split header makes the gathering buffer
		if n := allocs.Count(1000, func() { feed(s, resp, step) }); n > allocs.Slack {
			t.Errorf("step %d: %d allocations in 1000 responses", step, n)
		}
	}
}

// Whatever the bytes, the parser does not panic, takes no more than it is
// given, and reaches the same outcome however the bytes are split; where
// net/http reads a well-formed response with a length, both agree on its
// status and on where it ends.
func FuzzSession(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.0 500 x\r\n\r\n",
	} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, resp []byte, step uint8) {
		whole := &session{}
		o1, done1, used1 := feed(whole, resp, 0)
		split := &session{}
		o2, done2, used2 := feed(split, resp, int(step%16)+1)
		if used1 > len(resp) || used2 > len(resp) {
			t.Fatalf("took %d/%d of %d bytes", used1, used2, len(resp))
		}
		if done1 != done2 || (done1 && (o1 != o2 || used1 != used2)) {
			t.Fatalf("whole: %v %+v %d; split by %d: %v %+v %d", done1, o1, used1, int(step%16)+1, done2, o2, used2)
		}
		if !done1 || o1.Err == protocol.Protocol {
			return
		}
		res, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(resp)), nil)
		if err != nil || res.ContentLength < 0 || res.StatusCode < 200 {
			return // net/http wants more, or reads it otherwise: not comparable
		}
		br := bufio.NewReader(bytes.NewReader(resp))
		res, _ = http.ReadResponse(br, nil)
		if _, err := io.Copy(io.Discard, res.Body); err != nil {
			return
		}
		if int32(res.StatusCode) != o1.Status {
			t.Errorf("status %d, net/http %d", o1.Status, res.StatusCode)
		}
		if rest := len(resp) - br.Buffered(); rest != used1 && res.Header.Get("Transfer-Encoding") == "" {
			t.Errorf("the response ends at %d, net/http %d", used1, rest)
		}
	})
}
