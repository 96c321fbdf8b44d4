package httpbin

import (
	"bufio"
	"bytes"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"loadgen/internal/allocs"
	"loadgen/internal/race"
)

func TestParseHead(t *testing.T) {
	const hot = "GET /bytes/100 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: loadgen\r\n\r\n"
	for _, tc := range []struct {
		in     string
		want   verdict
		n      int // -1: all of in
		path   string
		isHead bool
		close  bool
	}{
		{hot, parsed, len(hot), "/bytes/100", false, false},
		{hot + "GET /x", parsed, len(hot), "/bytes/100", false, false},
		{"HEAD /a?b=c HTTP/1.1\r\nhost: x\r\nCONNECTION: Close\r\n\r\n", parsed, -1, "/a", true, true},
		{"GET /a HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n", parsed, -1, "/a", false, false},
		{"GET /a HTTP/1.1\r\nHost:\t x \t\r\n\r\n", parsed, -1, "/a", false, false},
		{"", needMore, 0, "", false, false},
		{"G", needMore, 0, "", false, false},
		{"GET /bytes/100 HTTP/1.1\r\nHost: x\r\n", needMore, 0, "", false, false},
		{"GET /bytes/100 HTTP/1.1\r\nHost: x\r\n\r", needMore, 0, "", false, false},
		{"POST /post HTTP/1.1\r\n", foreign, 0, "", false, false},
		{"GET / HTTP/1.0\r\n", foreign, 0, "", false, false},
		{"GET /a%20 HTTP/1.1\r\n", foreign, 0, "", false, false},
		{"GET /a/./b HTTP/1.1\r\n", foreign, 0, "", false, false},
		{"GET /a#f HTTP/1.1\r\n", foreign, 0, "", false, false},
		{"GET http://x/ HTTP/1.1\r\n", foreign, 0, "", false, false},
		{"GET / HTTP/1.1\nHost", foreign, 0, "", false, false},
		{"GET / HTTP/1.1\r\nHost: x\rX", foreign, 0, "", false, false},
		{"GET / HTTP/1.1\r\n\r\n", foreign, 0, "", false, false},
		{"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", foreign, 0, "", false, false},
		{"GET / HTTP/1.1\r\nHost: x\r\nConnection: upgrade\r\n\r\n", foreign, 0, "", false, false},
		{"GET / HTTP/1.1\r\nHost: x\r\nX: \x01\r\n\r\n", foreign, 0, "", false, false},
		{"GET / HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n", foreign, 0, "", false, false},
		{"GET / HTTP/1.1\r\nHost: x\r\n: v\r\n\r\n", foreign, 0, "", false, false},
		{"GET / HTTP/1.1\r\n" + strings.Repeat("X: y\r\n", maxHeaders) + "Host: x\r\n\r\n", foreign, 0, "", false, false},
		{"GET / HTTP/1.1\r\nX: " + strings.Repeat("y", maxHead), foreign, 0, "", false, false},
	} {
		var h head
		n, v := parseHead([]byte(tc.in), &h)
		if tc.n < 0 {
			tc.n = len(tc.in)
		}
		if v != tc.want || n != tc.n {
			t.Errorf("parseHead(%.60q) = %d, %d; want %d, %d", tc.in, n, v, tc.n, tc.want)
			continue
		}
		if v == parsed && (string(h.path) != tc.path || h.isHead != tc.isHead || h.close != tc.close) {
			t.Errorf("parseHead(%.60q): path %q head %v close %v", tc.in, h.path, h.isHead, h.close)
		}
	}
}

// FuzzParseHead checks that the verdict does not depend on how the bytes were
// split into reads, and what the loop parses, net/http and fasthttp read
// alike: the same method, target, host, fields and framing (no body), and
// fasthttp's normalized path is the one the loop routes by.
func FuzzParseHead(f *testing.F) {
	f.Add([]byte("GET /bytes/100 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: loadgen\r\n\r\n"), 7)
	f.Add([]byte("HEAD /status/204?x=%41 HTTP/1.1\r\nhost: x\r\nConnection: close\r\nX-A: 1\r\nx-a:  2 \r\n\r\nGET"), 30)
	f.Add([]byte("GET /get HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc"), 3)
	f.Add([]byte("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), 5)
	f.Add([]byte("GET /a;b=c:d@e!$&'()*+,= HTTP/1.1\r\nHost: [::1]:80\r\n\r\n"), 9)
	f.Fuzz(func(t *testing.T, data []byte, cut int) {
		var h head
		n, v := parseHead(data, &h)
		full := h.clone()
		cuts := []int{0}
		if len(data) <= 512 {
			for k := 1; k <= len(data); k++ {
				cuts = append(cuts, k)
			}
		} else if cut >= 0 {
			cuts = append(cuts, cut%(len(data)+1))
		}
		for _, k := range cuts {
			var hk head
			nk, vk := parseHead(data[:k], &hk)
			switch {
			case vk != needMore && vk != v:
				t.Fatalf("first %d bytes: verdict %d, all %d bytes: %d", k, vk, len(data), v)
			case vk == parsed && (nk != n || !hk.clone().equal(full)):
				t.Fatalf("first %d bytes parse as %d bytes %+v, all as %d bytes %+v", k, nk, hk.clone(), n, full)
			}
		}
		if v != parsed {
			return
		}
		if n > len(data) || !bytes.HasSuffix(data[:n], []byte("\r\n\r\n")) {
			t.Fatalf("head of %d bytes, of %d", n, len(data))
		}
		checkNetHTTP(t, data[:n], full)
		checkFasthttp(t, data[:n], full)
	})
}

// headCopy is a parsed head with copies of its bytes.
type headCopy struct {
	method, uri, path, host string
	isHead, close           bool
	header                  [][2]string
}

func (h *head) clone() headCopy {
	c := headCopy{string(h.method), string(h.uri), string(h.path), string(h.host), h.isHead, h.close, nil}
	for _, f := range h.header {
		c.header = append(c.header, [2]string{string(f.k), string(f.v)})
	}
	return c
}

func (a headCopy) equal(b headCopy) bool {
	return a.method == b.method && a.uri == b.uri && a.path == b.path && a.host == b.host &&
		a.isHead == b.isHead && a.close == b.close && slices.Equal(a.header, b.header)
}

func checkNetHTTP(t *testing.T, b []byte, h headCopy) {
	t.Helper()
	br := bufio.NewReader(bytes.NewReader(b))
	r, err := http.ReadRequest(br)
	if err != nil {
		t.Fatalf("net/http refuses what the loop parsed: %v\n%q", err, b)
	}
	if br.Buffered() != 0 || r.ContentLength != 0 || len(r.TransferEncoding) != 0 {
		t.Fatalf("net/http: %d bytes left, length %d, %v: a body", br.Buffered(), r.ContentLength, r.TransferEncoding)
	}
	if r.Method != h.method || r.RequestURI != h.uri || r.Proto != "HTTP/1.1" || r.Host != h.host || r.Close != h.close {
		t.Fatalf("net/http reads %s %s %s host %q close %v; the loop %+v", r.Method, r.RequestURI, r.Proto, r.Host, r.Close, h)
	}
	want := http.Header{}
	for _, f := range h.header {
		if !strings.EqualFold(f[0], "Host") {
			want.Add(f[0], f[1])
		}
	}
	for k, vs := range r.Header {
		if !slices.Equal(vs, want[k]) {
			t.Fatalf("net/http: %s %q, the loop %q", k, vs, want[textproto.CanonicalMIMEHeaderKey(k)])
		}
	}
	if len(r.Header) != len(want) {
		t.Fatalf("net/http: fields %v, the loop %v", r.Header, want)
	}
}

func checkFasthttp(t *testing.T, b []byte, h headCopy) {
	t.Helper()
	var r fasthttp.Request
	br := bufio.NewReader(bytes.NewReader(b))
	if err := r.Read(br); err != nil {
		t.Fatalf("fasthttp refuses what the loop parsed: %v\n%q", err, b)
	}
	switch {
	case br.Buffered() != 0 || len(r.Body()) != 0:
		t.Fatalf("fasthttp: %d bytes left, body %q", br.Buffered(), r.Body())
	case string(r.Header.Method()) != h.method || string(r.Header.RequestURI()) != h.uri || !r.Header.IsHTTP11():
		t.Fatalf("fasthttp reads %s %s; the loop %+v", r.Header.Method(), r.Header.RequestURI(), h)
	case string(r.URI().Path()) != h.path:
		t.Fatalf("fasthttp routes by %q, the loop by %q", r.URI().Path(), h.path)
	case string(r.Header.Host()) != h.host || r.Header.ConnectionClose() != h.close:
		t.Fatalf("fasthttp: host %q close %v; the loop %+v", r.Header.Host(), r.Header.ConnectionClose(), h)
	}
}

// TestParseHeadAllocs checks that parsing allocates nothing once its field
// list has grown.
func TestParseHeadAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are measured without -race (make test)")
	}
	b := []byte("GET /bytes/100 HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: loadgen\r\nAccept: */*\r\n\r\n")
	var h head
	if n := allocs.Count(1000, func() { parseHead(b, &h) }); n > allocs.Slack {
		t.Errorf("%d allocations in 1000 parses, want 0", n)
	}
}

func BenchmarkParseHead(b *testing.B) {
	req := []byte("GET /bytes/100 HTTP/1.1\r\nHost: 127.0.0.1:18181\r\nUser-Agent: loadgen/dev\r\n\r\n")
	var h head
	b.ReportAllocs()
	b.SetBytes(int64(len(req)))
	for b.Loop() {
		if _, v := parseHead(req, &h); v != parsed {
			b.Fatal(v)
		}
	}
}
