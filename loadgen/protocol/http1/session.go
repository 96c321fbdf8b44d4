package http1

import (
	"bytes"

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
	head bool // a HEAD request: responses have no body
	resp response
}

var _ protocol.Session = (*session)(nil)

func (s *session) Request() []byte { return s.req }

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
	if class == protocol.None && r.status >= 400 {
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
	ok := r.parse(buf[:end], head)
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

// parse reads a complete header and sets what follows it.
func (r *response) parse(h []byte, head bool) bool {
	line, rest := cutLine(h)
	// HTTP/1.x SSS[ reason]
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' || (len(line) > 12 && line[12] != ' ') {
		return false
	}
	status := 0
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return false
		}
		status = status*10 + int(c-'0')
	}
	if status < 100 {
		return false
	}
	r.status = status
	keepAlive := line[7] == '1' // HTTP/1.1 keeps the connection unless told
	length, chunked := int64(-1), false
	for len(rest) > 0 {
		line, rest = cutLine(rest)
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok || len(name) == 0 || bytes.ContainsAny(name, " \t") {
			return false
		}
		value = bytes.Trim(value, " \t")
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			n, ok := parseLength(value)
			if !ok || (length >= 0 && n != length) {
				return false
			}
			length = n
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = lastToken(value, "chunked")
		case bytes.EqualFold(name, []byte("Connection")):
			if hasToken(value, "close") {
				keepAlive = false
			} else if hasToken(value, "keep-alive") {
				keepAlive = true
			}
		}
	}
	r.close = r.close || !keepAlive
	switch {
	case status == 101:
		r.close = true // the connection is another protocol's now
		r.state = inLength
	case status < 200:
		r.state = inHeader // an interim response: the real one follows
		return true
	case head || status == 204 || status == 304:
		r.state = inLength
	case chunked:
		r.state = inChunked
		r.chunk = chunker{}
		return true
	case length >= 0:
		r.state, r.remain = inLength, length
		return true
	default:
		r.state = inClose
		return true
	}
	r.remain = 0
	return true
}

// cutLine splits off the first line of b, without its CRLF or LF.
func cutLine(b []byte) (line, rest []byte) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil
	}
	line, rest = b[:i], b[i+1:]
	return bytes.TrimSuffix(line, []byte("\r")), rest
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

// hasToken tells whether a comma-separated header value holds tok.
func hasToken(v []byte, tok string) bool {
	for len(v) > 0 {
		var t []byte
		t, v, _ = bytes.Cut(v, []byte(","))
		if bytes.EqualFold(bytes.Trim(t, " \t"), []byte(tok)) {
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
	return bytes.EqualFold(bytes.Trim(v, " \t"), []byte(tok))
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
