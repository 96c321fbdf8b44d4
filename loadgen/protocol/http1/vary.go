package http1

import (
	"fmt"
	"strconv"

	"loadgen/loadgen/protocol"
)

// Requests that vary: a request with fields ({{seq}}, {{uuid}} …:
// protocol.ParseTemplate) is compiled once, at NewDialer, into its head
// (request line and headers) and its body, and rendered per request into
// a buffer its connection keeps: the buffer grows to the largest request
// rendered, then nothing more is allocated.

// varying is a request with fields, compiled.
type varying struct {
	head *protocol.Template // request line and headers, each line ended
	body *protocol.Template // nil without a body
	clen bool               // a Content-Length is sent (a body, or POST, PUT, PATCH)
	uses protocol.Uses
}

// clRoom is the room rendering keeps for "Content-Length: N\r\n\r\n"
// before it knows N: the body is rendered after it, then moved back.
const clRoom = len("Content-Length: ") + 20 + len("\r\n\r\n")

// render renders one request into b's room (b[:0]) with the next values
// of vars, and returns it.
func (v *varying) render(b []byte, vars *protocol.Vars) []byte {
	d := vars.Draw(v.uses)
	b = v.head.Append(b[:0], &d)
	if !v.clen {
		return append(b, "\r\n"...)
	}
	h := len(b)
	b = append(b, make([]byte, clRoom)...) // no allocation once b has room
	if v.body != nil {
		b = v.body.Append(b, &d)
	}
	n := len(b) - h - clRoom
	cl := append(b[h:h], "Content-Length: "...)
	cl = strconv.AppendInt(cl, int64(n), 10)
	cl = append(cl, "\r\n\r\n"...)
	copy(b[h+len(cl):], b[h+clRoom:])
	return b[:h+len(cl)+n]
}

// compile makes the varying request of head (request line and header
// lines, as built) and body.
func compile(head string, body []byte, bodyFields, clen bool, feed *protocol.Feed) (*varying, error) {
	ht, err := protocol.ParseTemplate(head, feed)
	if err != nil {
		return nil, err // each piece was checked: not reached
	}
	v := &varying{head: ht, clen: clen, uses: ht.Uses()}
	if len(body) > 0 {
		if bodyFields {
			if v.body, err = protocol.ParseTemplate(string(body), feed); err != nil {
				return nil, fmt.Errorf("the body: %w", err)
			}
		} else {
			v.body = protocol.LiteralTemplate(string(body))
		}
		v.uses |= v.body.Uses()
	}
	return v, nil
}
