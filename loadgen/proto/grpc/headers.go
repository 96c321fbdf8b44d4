package grpc

import (
	"bytes"

	"golang.org/x/net/http2/hpack"
)

// headerField is one request header: name, or the index of its name in
// HPACK's static table.
type headerField struct {
	nameIndex   uint64 // 0: the name is a literal
	name, value string
}

// defaultTableSize is HPACK's dynamic table size until changed.
const defaultTableSize = 4096

// requestFields are a call's headers, the same for every call of a Dialer.
// gRPC's deadline header (grpc-timeout) is not among them: the client
// enforces deadlines itself.
func requestFields(s settings, tls bool, method string) []headerField {
	authority := s.Target
	if s.authority != "" {
		authority = s.authority
	}
	ua := "loadgen"
	if s.userAgent != "" {
		ua = s.userAgent
	}
	scheme := "http"
	if tls {
		scheme = "https"
	}
	f := []headerField{
		{name: ":method", value: "POST"},
		{name: ":scheme", value: scheme},
		{nameIndex: 4, name: ":path", value: method},
		{nameIndex: 1, name: ":authority", value: authority},
		{nameIndex: 31, name: "content-type", value: "application/grpc"},
		{nameIndex: 58, name: "user-agent", value: ua},
		{name: "te", value: "trailers"},
	}
	for i := 0; i+1 < len(s.md); i += 2 {
		f = append(f, headerField{name: s.md[i], value: s.md[i+1]})
	}
	return f
}

// headerBlocks encodes the request headers twice for one connection: first
// for its first request, adding each header to the peer's HPACK table (as
// far as tableSize allows), and next for every later request, referring to
// those entries. The blocks stay valid because this client sends no other
// header block on the connection, and so never changes the table. used is
// how much of the table they rely on.
//
// The table holds 4096 bytes until the encoder says otherwise; a peer that
// allows less (SETTINGS_HEADER_TABLE_SIZE) is told the smaller size at the
// start of the first block, and a peer that allows more is not used more.
func headerBlocks(fields []headerField, tableSize uint32) (first, next []byte, used uint32) {
	if tableSize < defaultTableSize {
		first = appendInt(first, 5, 0x20, uint64(tableSize)) // dynamic table size update
	}
	tableSize = min(tableSize, defaultTableSize)
	// The static entries of :method POST and :scheme http/https.
	static := map[string]uint64{":method POST": 3, ":scheme http": 6, ":scheme https": 7}
	indexed := 0        // fields added to the table so far
	var positions []int // per field: its order in the table; -1 literal; -2-i static entry i
	for _, f := range fields {
		if i, ok := static[f.name+" "+f.value]; ok {
			first = appendInt(first, 7, 0x80, i)
			positions = append(positions, -2-int(i))
			continue
		}
		size := uint32(len(f.name) + len(f.value) + 32)
		if used+size <= tableSize {
			used += size
			first = appendLiteral(first, 6, 0x40, f) // incremental indexing
			positions = append(positions, indexed)
			indexed++
			continue
		}
		first = appendLiteral(first, 4, 0x00, f) // without indexing
		positions = append(positions, -1)
	}
	for i, f := range fields {
		switch p := positions[i]; {
		case p >= 0: // newest entry is 62
			next = appendInt(next, 7, 0x80, uint64(62+indexed-1-p))
		case p == -1:
			next = appendLiteral(next, 4, 0x00, f)
		default:
			next = appendInt(next, 7, 0x80, uint64(-2-p))
		}
	}
	return first, next, used
}

// appendLiteral appends a literal header field with the given
// representation (pattern, prefix bits), its name indexed when it can be.
func appendLiteral(b []byte, prefix uint8, pattern byte, f headerField) []byte {
	b = appendInt(b, prefix, pattern, f.nameIndex)
	if f.nameIndex == 0 {
		b = appendString(b, f.name)
	}
	return appendString(b, f.value)
}

// appendString appends an HPACK string literal, Huffman-coded when shorter.
func appendString(b []byte, s string) []byte {
	if n := hpack.HuffmanEncodeLength(s); n < uint64(len(s)) {
		b = appendInt(b, 7, 0x80, n)
		return hpack.AppendHuffmanString(b, s)
	}
	b = appendInt(b, 7, 0, uint64(len(s)))
	return append(b, s...)
}

// appendInt appends an HPACK integer with an n-bit prefix (RFC 7541 5.1).
func appendInt(b []byte, n uint8, pattern byte, v uint64) []byte {
	max := uint64(1)<<n - 1
	if v < max {
		return append(b, pattern|byte(v))
	}
	b = append(b, pattern|byte(max))
	v -= max
	for v >= 128 {
		b = append(b, byte(v&0x7f|0x80))
		v >>= 7
	}
	return append(b, byte(v))
}

// responseFields is what a response's header block says, as far as a
// gRPC client cares.
type responseFields struct {
	httpStatus  int   // :status, 0 when absent
	grpc        bool  // content-type application/grpc…
	grpcStatus  int32 // grpc-status, -1 when absent
	contentType bool  // a content-type was present
}

func (r *responseFields) reset() {
	*r = responseFields{grpcStatus: -1}
}

// add takes one decoded header field.
func (r *responseFields) add(name, value []byte) {
	switch string(name) {
	case ":status":
		r.httpStatus = atoi(value)
	case "content-type":
		r.contentType = true
		r.grpc = bytes.HasPrefix(value, []byte("application/grpc"))
	case "grpc-status":
		if n := atoi(value); n >= 0 {
			r.grpcStatus = int32(n)
		}
	}
}

// atoi parses a small non-negative decimal, -1 when it is not one.
func atoi(s []byte) int {
	if len(s) == 0 || len(s) > 9 {
		return -1
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// httpToCode maps an HTTP status without a gRPC status to a gRPC code, as
// gRPC's spec (http-grpc-status-mapping.md) says.
func httpToCode(status int) int32 {
	switch status {
	case 400:
		return 13 // Internal
	case 401:
		return 16 // Unauthenticated
	case 403:
		return 7 // PermissionDenied
	case 404:
		return 12 // Unimplemented
	case 429, 502, 503, 504:
		return 14 // Unavailable
	}
	return 2 // Unknown
}
