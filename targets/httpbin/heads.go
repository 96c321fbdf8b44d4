package httpbin

import "github.com/valyala/fasthttp"

// The event loop answers with the very bytes fasthttp would write: each
// response head is made by fasthttp's own ResponseHeader, set up as
// writeFast and fasthttp's server set it up, and kept for the rest of the
// second (its Date is fasthttp's, which changes once a second). The hot
// path finds its head among the few kept, so a request costs no header
// formatting at all.

// headKey is everything a response head depends on, the date aside.
type headKey struct {
	status       int
	ctype, allow string
	length       int  // the body's
	isHead       bool // answering HEAD: the body is not sent
	close        bool // Connection: close
}

// heads keeps the response heads of the current second, one loop's.
type heads struct {
	resp fasthttp.Response
	sec  int64 // the second the kept heads are of
	kept [8]struct {
		key headKey
		b   []byte // empty: free
	}
	next int // the slot to fill next
}

// get is the head of k in the second sec (Unix time).
func (h *heads) get(k headKey, sec int64) []byte {
	if sec != h.sec {
		h.sec = sec
		for i := range h.kept {
			h.kept[i].b = h.kept[i].b[:0] // none is of this second: empty, storage kept
		}
	}
	for i := range h.kept {
		if e := &h.kept[i]; len(e.b) > 0 && e.key == k {
			return e.b
		}
	}
	e := &h.kept[h.next]
	h.next = (h.next + 1) % len(h.kept)
	e.key, e.b = k, h.build(e.b[:0], k)
	return e.b
}

// build appends the head fasthttp writes for k: status line, Date,
// Content-Type, Content-Length (unless the status or HEAD leaves it out),
// Allow, Connection: close.
func (h *heads) build(dst []byte, k headKey) []byte {
	r := &h.resp
	r.Reset()
	r.SetStatusCode(k.status)
	r.Header.SetContentType(k.ctype)
	if k.allow != "" {
		r.Header.Set("Allow", k.allow)
	}
	if k.close {
		r.Header.SetConnectionClose()
	}
	// fasthttp's Response.write: the length is set when the body is sent
	// or not empty.
	if sendsBody(k.status, k.isHead) || k.length > 0 {
		r.Header.SetContentLength(k.length)
	}
	return r.Header.AppendBytes(dst)
}

// sendsBody reports whether a body follows the head, unless the request was
// HEAD or the status has none (1xx, 204, 304), as fasthttp has it.
func sendsBody(status int, isHead bool) bool {
	return !isHead && status >= 200 && status != 204 && status != 304
}
