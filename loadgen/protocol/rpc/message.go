package rpc

import (
	"encoding/binary"

	"google.golang.org/protobuf/encoding/protowire"
)

// Method names, written out so that this package imports only proto (the
// target's echopb holds the same names; a test checks).
const (
	unaryMethod    = "/loadgen.echo.v1.Echo/Unary"
	pingPongMethod = "/loadgen.echo.v1.Echo/PingPong"
	serverMethod   = "/loadgen.echo.v1.Echo/ServerStream"
	clientMethod   = "/loadgen.echo.v1.Echo/ClientStream"
	healthMethod   = "/grpc.health.v1.Health/Check"
)

// prefixLen is the gRPC message prefix: compression flag and length.
const prefixLen = 5

// method is the :path of every call s makes.
func (s settings) method() string {
	switch {
	case s.Call != "":
		return s.Call
	case s.Health:
		return healthMethod
	case s.Mode == Stream:
		return pingPongMethod
	case s.Mode == ServerStream:
		return serverMethod
	case s.Mode == ClientStream:
		return clientMethod
	}
	return unaryMethod
}

// newRequest encodes the request once, as it goes on the wire: the gRPC
// prefix, then a loadgen.echo.v1.Payload with a body (field 1) of Size zero
// bytes, response_size (field 2) and, server-streaming, messages (field
// 3). A health check is an empty
// HealthCheckRequest (service "": the server as a whole); a Call's request
// is its Message.
func newRequest(s settings) []byte {
	b := make([]byte, prefixLen, prefixLen+s.Size+len(s.Message)+16)
	switch {
	case s.Call != "":
		b = append(b, s.Message...)
	case !s.Health:
		if s.Size > 0 {
			b = protowire.AppendTag(b, 1, protowire.BytesType)
			b = protowire.AppendVarint(b, uint64(s.Size))
			b = b[:len(b)+s.Size] // zero bytes: the capacity is fresh
		}
		if s.ResponseSize != 0 {
			b = protowire.AppendTag(b, 2, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(int64(s.ResponseSize))) // int32: sign-extended
		}
		if s.Mode == ServerStream {
			b = protowire.AppendTag(b, 3, protowire.VarintType) // messages: how many replies
			b = protowire.AppendVarint(b, uint64(s.Messages))
		}
	}
	binary.BigEndian.PutUint32(b[1:], uint32(len(b)-prefixLen))
	return b
}

// callBody is what a call sends: the request, or in ClientStream mode
// Messages of them, one after the other.
func (s settings) callBody(req []byte) []byte {
	if s.Mode != ClientStream {
		return req
	}
	b := make([]byte, 0, len(req)*s.Messages)
	for range s.Messages {
		b = append(b, req...)
	}
	return b
}

// replyCheck is how s's replies are judged.
func (s settings) replyCheck() replyCheck {
	switch {
	case s.Call != "":
		return replyCheck{kind: anyReply}
	case s.Health:
		return replyCheck{kind: healthReply}
	case s.ResponseSize < 0:
		return replyCheck{kind: echoReply}
	case s.ResponseSize > 0:
		return replyCheck{kind: echoReply, want: s.ResponseSize}
	}
	return replyCheck{kind: echoReply, want: s.Size}
}

// replyKind says how to check a reply.
type replyKind uint8

const (
	echoReply   replyKind = iota // loadgen.echo.v1.Payload with a body of want bytes
	healthReply                  // grpc.health.v1.HealthCheckResponse, status SERVING
	anyReply                     // a Call's reply, of a type not known here: well-formed protobuf
)

// headLen is how much of a reply message is kept for checking: enough for
// the tag and length of the body, or a whole health response.
const headLen = 32

// replyCheck judges a reply message from its first bytes and its length,
// without keeping the rest: a body is skipped by its length.
type replyCheck struct {
	kind replyKind
	want int // expected body length (echoReply)
}

// verdict is what replyCheck found.
type verdict uint8

const (
	replyOK         verdict = iota
	replyBad                // not what the target should send
	replyNotServing         // a health status other than SERVING
)

// check walks the message's fields as far as its head goes, and skips the
// rest by the lengths of its fields: they must end where the message does.
// Groups (proto2's delimited fields, still valid wire format) must close,
// in order.
func (r replyCheck) check(head []byte, total int) verdict {
	c := cursor{head: head, total: total}
	body, status := 0, uint64(0)
	var g groups
	for c.off < total {
		num, typ, ok := c.tag()
		if !ok {
			return c.unknownOr(replyBad, body, r)
		}
		switch typ {
		case protowire.VarintType:
			v, ok := c.varint()
			if !ok {
				return c.unknownOr(replyBad, body, r)
			}
			if num == 1 {
				status = v
			}
		case protowire.BytesType:
			n, ok := c.varint()
			if !ok {
				return c.unknownOr(replyBad, body, r)
			}
			if n > uint64(total-c.off) {
				return replyBad
			}
			c.off += int(n)
			if num == 1 {
				body = int(n)
			}
		case protowire.Fixed32Type:
			c.off += 4
		case protowire.Fixed64Type:
			c.off += 8
		case protowire.StartGroupType:
			g.start(num)
		case protowire.EndGroupType:
			if !g.end(num) {
				return replyBad
			}
		default:
			return replyBad
		}
	}
	if c.off != total || g.depth != 0 {
		return replyBad
	}
	switch r.kind {
	case anyReply:
		return replyOK
	case healthReply:
		if status != 1 { // SERVING
			return replyNotServing
		}
		return replyOK
	}
	if body != r.want {
		return replyBad
	}
	return replyOK
}

// groups are the groups open where a check is: how many, and the numbers
// of the outermost ones, which their end tags must repeat. The numbers are
// in a fixed array, as a check allocates nothing: groups nested deeper
// than it holds are only counted.
type groups struct {
	depth int
	open  [8]protowire.Number
}

func (g *groups) start(num protowire.Number) {
	if g.depth < len(g.open) {
		g.open[g.depth] = num
	}
	g.depth++
}

// end closes the innermost group: false if none is open or num is not its.
func (g *groups) end(num protowire.Number) bool {
	if g.depth == 0 {
		return false
	}
	g.depth--
	return g.depth >= len(g.open) || g.open[g.depth] == num
}

// cursor reads protobuf wire data from the kept head of a message of total
// bytes. Past the head nothing can be read, only skipped.
type cursor struct {
	head  []byte
	total int
	off   int
	blind bool // a read went past the head
}

// unknownOr is the verdict when parsing stopped: if it stopped only because
// the rest was not kept, the fields seen so far decide. For a Call's reply
// they did parse, and their lengths fit the message's.
func (c *cursor) unknownOr(v verdict, body int, r replyCheck) verdict {
	if !c.blind {
		return v
	}
	switch r.kind {
	case anyReply:
		return replyOK
	case echoReply:
		if body == r.want {
			return replyOK
		}
	}
	return replyBad
}

func (c *cursor) byte() (byte, bool) {
	if c.off >= c.total {
		return 0, false
	}
	if c.off >= len(c.head) {
		c.blind = true
		return 0, false
	}
	b := c.head[c.off]
	c.off++
	return b, true
}

func (c *cursor) varint() (uint64, bool) {
	var v uint64
	for shift := uint(0); shift < 64; shift += 7 {
		b, ok := c.byte()
		if !ok {
			return 0, false
		}
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v, true
		}
	}
	return 0, false
}

func (c *cursor) tag() (protowire.Number, protowire.Type, bool) {
	v, ok := c.varint()
	if !ok || v>>3 == 0 || v>>3 > uint64(protowire.MaxValidNumber) {
		return 0, 0, false
	}
	return protowire.Number(v >> 3), protowire.Type(v & 7), true
}

// msgReader splits a stream's DATA into gRPC messages: it keeps each
// message's head for the check and counts the rest. Only the connection's
// reader uses it, under the connection's lock.
type msgReader struct {
	npre int
	pre  [prefixLen]byte
	left int // message bytes still to come
	size int // the current message's length
	nh   int
	head [headLen]byte
	bad  bool // compressed or oversized: the stream carries no valid message
}

func (m *msgReader) reset() { *m = msgReader{} }

// feed consumes p up to the end of the current message: n bytes, and
// whether a message is complete (its head, size and bad are then set).
func (m *msgReader) feed(p []byte) (n int, complete bool) {
	if m.npre < prefixLen {
		n = copy(m.pre[m.npre:], p)
		m.npre += n
		if m.npre < prefixLen {
			return n, false
		}
		m.size = int(binary.BigEndian.Uint32(m.pre[1:]))
		m.left, m.nh = m.size, 0
		m.bad = m.pre[0] != 0 || m.size > maxMessage // compression was not asked for
		if m.left == 0 {
			m.npre = 0
			return n, true
		}
		p = p[n:]
	}
	k := min(m.left, len(p))
	if m.nh < headLen {
		m.nh += copy(m.head[m.nh:], p[:k])
	}
	m.left -= k
	n += k
	if m.left == 0 {
		m.npre = 0
		return n, true
	}
	return n, false
}
