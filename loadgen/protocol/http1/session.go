package http1

import (
	"bytes"

	"loadgen/internal/httpsyntax"
	"loadgen/loadgen/protocol"
)

// maxHeader bounds a response's status line and headers, as readBufSize
// does on the Dial path (nginx's default limit is 8 KiB).
const maxHeader = readBufSize

// session is an HTTP/1.1 connection as an event loop drives it: the
// request's bytes, and a response parser fed whatever bytes arrive. It
// allocates nothing per request: a header split across reads is gathered
// in a buffer made the first time that happens and kept.
type session struct {
	req  []byte
	vary *varying            // the request to render, when it has fields
	vars *protocol.Vars      // the Dialer's: the values fields share
	buf  []byte              // what vary renders into, kept
	head bool                // a HEAD request: responses have no body
	mix  *list               // the Dialer's request mix, if any
	ok   *protocol.StatusSet // the Dialer's: the statuses of a success
	resp response
}

var (
	_ protocol.Session = (*session)(nil)
	_ protocol.Picker  = (*session)(nil)
)

// Request is the next request: with fields, rendered now.
func (s *session) Request() []byte {
	if s.vary != nil {
		s.buf = s.vary.render(s.buf, s.vars)
		s.req = s.buf
	}
	return s.req
}

// Pick makes request i of the Dialer's mix the next one Request gives
// (protocol.Picker): the response is parsed as that request's (a HEAD's
// has no body).
func (s *session) Pick(i int) { s.req, s.vary, s.head = s.mix.reqs[i], s.mix.varys[i], s.mix.heads[i] }

// Response parses the response, as RFC 9112 frames it: interim 1xx
// responses are skipped; a HEAD request's, 1xx, 204 and 304 have no body;
// then chunked, Content-Length, or until the connection closes.
func (s *session) Response(p []byte) (int, bool, protocol.Outcome) {
	r := &s.resp
	n := 0
	for {
		switch r.state {
		case inHeader:
			m, ok := r.header(p[n:], s.head)
			n += m
			if !ok {
				if r.err {
					return n, true, s.outcome(protocol.Protocol)
				}
				return n, false, protocol.Outcome{}
			}
			continue // the body, or the next response after an interim one
		case inLength:
			take := int(min(r.remain, int64(len(p)-n)))
			n += take
			r.bytes += int64(take)
			if r.remain -= int64(take); r.remain > 0 {
				return n, false, protocol.Outcome{}
			}
		case inChunked:
			m, done, bad := r.chunk.chunks(p[n:])
			n += m
			r.bytes += int64(m)
			switch {
			case bad:
				return n, true, s.outcome(protocol.Protocol)
			case !done:
				return n, false, protocol.Outcome{}
			}
		case inClose:
			r.bytes += int64(len(p) - n)
			return len(p), false, protocol.Outcome{}
		}
		return n, true, s.outcome(protocol.None)
	}
}

// Closed ends a response delimited by the connection's end; any other is
// cut short.
func (s *session) Closed() protocol.Outcome {
	if s.resp.state == inClose {
		return s.outcome(protocol.None)
	}
	o := s.outcome(protocol.Read)
	o.Done = true
	return o
}

// outcome ends the current response and readies the parser for the next.
func (s *session) outcome(class protocol.ErrClass) protocol.Outcome {
	r := &s.resp
	o := protocol.Outcome{Status: int32(r.status), Err: class, Bytes: r.bytes, Written: int64(len(s.req)),
		Done: r.close || r.state == inClose || class != protocol.None}
	if class == protocol.None && s.ok.Failed(r.status) {
		o.Err = protocol.Status
	}
	*r = response{hdr: r.hdr[:0]}
	return o
}

// Where a response's parser is.
const (
	inHeader = iota
	inLength
	inChunked
	inClose
)

// response is the parser's state for one response.
type response struct {
	state  uint8
	err    bool   // the header is malformed
	hdr    []byte // a header split across reads, gathered
	status int
	remain int64 // inLength: body bytes left
	close  bool  // Connection: close, HTTP/1.0 without keep-alive, 101
	bytes  int64 // of this response (interim ones included)
	chunk  chunker
}

// header consumes a response header from p, gathering it in r.hdr when it
// arrives in pieces. It returns the bytes of p it used and whether the
// header is complete (then r.state says what follows).
func (r *response) header(p []byte, head bool) (int, bool) {
	if len(r.hdr) == 0 {
		// Most headers come whole in one read: one pass finds the lines
		// and parses them.
		if end, ok := r.parse(p, head); end >= 0 {
			r.bytes += int64(end)
			r.err = !ok
			return end, ok
		}
	}
	buf, from := p, 0
	if len(r.hdr) > 0 {
		from = max(0, len(r.hdr)-3) // the blank line may straddle the reads
		r.hdr = append(r.hdr, p...)
		buf = r.hdr
	}
	end := headerEnd(buf, from)
	if end < 0 {
		if len(buf) > maxHeader {
			r.err = true
			return len(p), false
		}
		if len(r.hdr) == 0 {
			r.hdr = append(r.hdr, p...)
		}
		return len(p), false
	}
	used := end - (len(buf) - len(p)) // of p
	r.bytes += int64(end)
	_, ok := r.parse(buf[:end], head)
	r.hdr = r.hdr[:0]
	if !ok {
		r.err = true
		return used, false
	}
	return used, true
}

// headerEnd is the length of the header in b (through its blank line), or
// -1 if b does not hold all of it yet. Lines end in CRLF or, leniently, LF.
func headerEnd(b []byte, from int) int {
	for i := from; ; {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return -1
		}
		i += j + 1
		if i < len(b) && b[i] == '\n' {
			return i + 1
		}
		if i+1 < len(b) && b[i] == '\r' && b[i+1] == '\n' {
			return i + 2
		}
	}
}

// parse reads the header at the start of h and sets what follows it. It
// returns the header's length (through its blank line) and whether it is
// well formed; the length is -1, and nothing is set, when h does not hold
// the whole header yet. A malformed header is judged once it is whole,
// as if it had come in pieces.
func (r *response) parse(h []byte, head bool) (int, bool) {
	line, i := nextLine(h, 0)
	if i < 0 {
		return -1, false
	}
	// HTTP/1.x SSS[ reason]
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' || (len(line) > 12 && line[12] != ' ') {
		return headerEnd(h, 0), false
	}
	status := 0
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return headerEnd(h, 0), false
		}
		status = status*10 + int(c-'0')
	}
	if status < 100 {
		return headerEnd(h, 0), false
	}
	keepAlive := line[7] == '1' // HTTP/1.1 keeps the connection unless told
	length, chunked := int64(-1), false
	for {
		from := i
		if line, i = nextLine(h, i); i < 0 {
			return -1, false
		}
		if len(line) == 0 {
			break
		}
		name, value, ok := cutField(line)
		switch {
		case !ok:
			return r.malformed(h, from, status)
		// By length first: most of a response's fields are none of these.
		case len(name) != len("Content-Length") && len(name) != len("Transfer-Encoding") && len(name) != len("Connection"):
		case isField(name, "Content-Length"):
			n, ok := parseLength(value)
			if !ok || (length >= 0 && n != length) {
				return r.malformed(h, from, status)
			}
			length = n
		case isField(name, "Transfer-Encoding"):
			chunked = lastToken(value, "chunked")
		case isField(name, "Connection"):
			if hasToken(value, "close") {
				keepAlive = false
			} else if hasToken(value, "keep-alive") {
				keepAlive = true
			}
		}
	}
	r.status = status
	r.close = r.close || !keepAlive
	switch {
	case status == 101:
		r.close = true // the connection is another protocol's now
		r.state = inLength
	case status < 200:
		r.state = inHeader // an interim response: the real one follows
		return i, true
	case head || status == 204 || status == 304:
		r.state = inLength
	case chunked:
		r.state = inChunked
		r.chunk = chunker{}
		return i, true
	case length >= 0:
		r.state, r.remain = inLength, length
		return i, true
	default:
		r.state = inClose
		return i, true
	}
	r.remain = 0
	return i, true
}

// malformed handles a bad field line at from. Once the header is whole, its
// status stands for the outcome, as a well-formed status line had it.
func (r *response) malformed(h []byte, from, status int) (int, bool) {
	end := headerEnd(h, from)
	if end >= 0 {
		r.status = status
	}
	return end, false
}

// nextLine is the line of h at from, without its CRLF or LF, and where the
// next one starts; -1 when the line has no end in h yet.
func nextLine(h []byte, from int) ([]byte, int) {
	j := bytes.IndexByte(h[from:], '\n')
	if j < 0 {
		return nil, -1
	}
	line := h[from : from+j]
	if j > 0 && line[j-1] == '\r' {
		line = line[:j-1]
	}
	return line, from + j + 1
}

func parseLength(v []byte) (int64, bool) {
	if len(v) == 0 || len(v) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// cutField splits a field line at its colon, in one pass over the name:
// a name is not empty and holds no space or tab (RFC 9112 5.1). The value
// comes without the spaces and tabs around it.
func cutField(line []byte) (name, value []byte, ok bool) {
	for i, c := range line {
		switch c {
		case ':':
			return line[:i], httpsyntax.TrimOWS(line[i+1:]), i > 0
		case ' ', '\t':
			return nil, nil, false
		}
	}
	return nil, nil, false
}

// isField reports whether name is want, in the case servers send it or in
// another.
func isField(name []byte, want string) bool {
	return string(name) == want || bytes.EqualFold(name, []byte(want))
}

// hasToken tells whether a comma-separated header value holds tok.
func hasToken(v []byte, tok string) bool {
	for len(v) > 0 {
		t := v
		if i := bytes.IndexByte(v, ','); i >= 0 {
			t, v = v[:i], v[i+1:]
		} else {
			v = nil
		}
		if t = httpsyntax.TrimOWS(t); string(t) == tok || bytes.EqualFold(t, []byte(tok)) {
			return true
		}
	}
	return false
}

// lastToken tells whether tok is the last of a comma-separated value.
func lastToken(v []byte, tok string) bool {
	if i := bytes.LastIndexByte(v, ','); i >= 0 {
		v = v[i+1:]
	}
	return bytes.EqualFold(httpsyntax.TrimOWS(v), []byte(tok))
}

// chunker walks a chunked body (RFC 9112 7.1) without keeping it:
// size line (hex, extensions ignored), data, CRLF … a zero size, trailer
// lines, a blank line.
type chunker struct {
	state  uint8
	size   int64
	digits int
}

const (
	csSize        = iota // hex digits of a chunk size
	csExt                // extensions, up to the LF
	csData               // data left: size
	csDataCR             // the CR after the data
	csDataLF             // the LF after it
	csTrailer            // at the start of a trailer line
	csTrailerLine        // in a trailer line, up to its LF
	csLastCR             // the CR of the final blank line (after a CR)
)

// chunks consumes p; done once the body's last byte is read.
func (c *chunker) chunks(p []byte) (n int, done, bad bool) {
	for n < len(p) {
		b := p[n]
		switch c.state {
		case csSize:
			switch {
			case hexVal(b) >= 0:
				if c.digits++; c.digits > 15 {
					return n, false, true
				}
				c.size = c.size<<4 | int64(hexVal(b))
			case c.digits > 0 && (b == ';' || b == ' ' || b == '\t' || b == '\r'):
				c.state = csExt
			case c.digits > 0 && b == '\n':
				c.endSize()
			default:
				return n, false, true
			}
		case csExt:
			if b == '\n' {
				c.endSize()
			}
		case csData:
			take := int(min(c.size, int64(len(p)-n)))
			n += take
			if c.size -= int64(take); c.size == 0 {
				c.state = csDataCR
			}
			continue
		case csDataCR:
			switch b {
			case '\r':
				c.state = csDataLF
			case '\n':
				c.state = csSize
			default:
				return n, false, true
			}
		case csDataLF:
			if b != '\n' {
				return n, false, true
			}
			c.state = csSize
		case csTrailer:
			switch b {
			case '\n':
				return n + 1, true, false
			case '\r':
				c.state = csLastCR
			default:
				c.state = csTrailerLine
			}
		case csLastCR:
			if b == '\n' {
				return n + 1, true, false
			}
			c.state = csTrailerLine
		case csTrailerLine:
			if b == '\n' {
				c.state = csTrailer
			}
		}
		n++
	}
	return n, false, false
}

// endSize moves past a size line: to the data, or to the trailer after the
// last (zero) chunk.
func (c *chunker) endSize() {
	c.digits = 0
	if c.size == 0 {
		c.state = csTrailer
		return
	}
	c.state = csData
}

func hexVal(b byte) int {
	switch {
	case b >= '0' && b <= '9':
		return int(b - '0')
	case b >= 'a' && b <= 'f':
		return int(b-'a') + 10
	case b >= 'A' && b <= 'F':
		return int(b-'A') + 10
	}
	return -1
}
