package http2

import (
	"bytes"
	"errors"

	"golang.org/x/net/http2/hpack"
)

// HPACK (RFC 7541), the two halves this client needs.
//
// Requests: every request of a run carries the same header list, so its
// header blocks are encoded once per Dialer. The first request on a
// connection inserts each field that is not in the static table into the
// peer's dynamic table ("first"); every later request refers to those entries
// by index ("steady"), a few bytes per request, as h2load and browsers do.
// Nothing else is ever inserted, so the entries stay put as long as they fit
// the peer's table. When they do not, every request is sent as literals
// without indexing ("literal").
//
// Responses: the decoder keeps the dynamic table in step with the server's
// encoder but stores only each entry's size and, for :status entries, the
// code. :status is the only field the client reads, so decoding allocates
// nothing; values are Huffman-decoded only when their length is needed.

// staticTable is RFC 7541 Appendix A; index i+1 is staticTable[i].
var staticTable = [...][2]string{
	{":authority", ""}, {":method", "GET"}, {":method", "POST"}, {":path", "/"},
	{":path", "/index.html"}, {":scheme", "http"}, {":scheme", "https"}, {":status", "200"},
	{":status", "204"}, {":status", "206"}, {":status", "304"}, {":status", "400"},
	{":status", "404"}, {":status", "500"}, {"accept-charset", ""}, {"accept-encoding", "gzip, deflate"},
	{"accept-language", ""}, {"accept-ranges", ""}, {"accept", ""}, {"access-control-allow-origin", ""},
	{"age", ""}, {"allow", ""}, {"authorization", ""}, {"cache-control", ""},
	{"content-disposition", ""}, {"content-encoding", ""}, {"content-language", ""}, {"content-length", ""},
	{"content-location", ""}, {"content-range", ""}, {"content-type", ""}, {"cookie", ""},
	{"date", ""}, {"etag", ""}, {"expect", ""}, {"expires", ""},
	{"from", ""}, {"host", ""}, {"if-match", ""}, {"if-modified-since", ""},
	{"if-none-match", ""}, {"if-range", ""}, {"if-unmodified-since", ""}, {"last-modified", ""},
	{"link", ""}, {"location", ""}, {"max-forwards", ""}, {"proxy-authenticate", ""},
	{"proxy-authorization", ""}, {"range", ""}, {"referer", ""}, {"refresh", ""},
	{"retry-after", ""}, {"server", ""}, {"set-cookie", ""}, {"strict-transport-security", ""},
	{"transfer-encoding", ""}, {"user-agent", ""}, {"vary", ""}, {"via", ""},
	{"www-authenticate", ""},
}

const (
	staticLen        = len(staticTable)
	staticStatusLo   = 8 // :status 200
	staticStatusHi   = 14
	entryOverhead    = 32   // RFC 7541 §4.1
	defaultTableSize = 4096 // SETTINGS_HEADER_TABLE_SIZE's initial value
)

// headerField is one request header, lowercased.
type headerField struct{ name, value string }

// requestBlocks are the encoded header blocks of the run's request.
type requestBlocks struct {
	first   []byte // inserts the non-static fields into the peer's table
	steady  []byte // refers to them
	literal []byte // no dynamic table at all
	size    int    // dynamic table space the inserted entries need
}

func encodeRequest(fields []headerField) requestBlocks {
	var b requestBlocks
	var inserted int
	for _, f := range fields {
		exact, name := staticIndex(f)
		if exact > 0 {
			b.first = appendInt(b.first, 0x80, 7, uint64(exact))
			b.literal = appendInt(b.literal, 0x80, 7, uint64(exact))
			continue
		}
		b.first = appendLiteral(b.first, 0x40, 6, name, f)
		b.literal = appendLiteral(b.literal, 0x00, 4, name, f)
		b.size += len(f.name) + len(f.value) + entryOverhead
		inserted++
	}
	// After the first block, the field inserted last is dynamic index 1
	// (absolute staticLen+1), the first inserted is staticLen+inserted.
	seen := 0
	for _, f := range fields {
		if exact, _ := staticIndex(f); exact > 0 {
			b.steady = appendInt(b.steady, 0x80, 7, uint64(exact))
			continue
		}
		seen++
		b.steady = appendInt(b.steady, 0x80, 7, uint64(staticLen+inserted-seen+1))
	}
	return b
}

// staticIndex returns the static-table index of an exact match (or 0) and of
// the first entry with the same name (or 0).
func staticIndex(f headerField) (exact, name int) {
	for i, e := range staticTable {
		if e[0] != f.name {
			continue
		}
		if name == 0 {
			name = i + 1
		}
		if e[1] == f.value {
			return i + 1, name
		}
	}
	return 0, name
}

func appendLiteral(dst []byte, first byte, prefix uint8, nameIdx int, f headerField) []byte {
	dst = appendInt(dst, first, prefix, uint64(nameIdx))
	if nameIdx == 0 {
		dst = appendString(dst, f.name)
	}
	return appendString(dst, f.value)
}

// appendString writes a string literal, Huffman-coded when that is shorter.
func appendString(dst []byte, s string) []byte {
	if n := hpack.HuffmanEncodeLength(s); n < uint64(len(s)) {
		dst = appendInt(dst, 0x80, 7, n)
		return hpack.AppendHuffmanString(dst, s)
	}
	dst = appendInt(dst, 0, 7, uint64(len(s)))
	return append(dst, s...)
}

// appendInt writes an HPACK integer with an n-bit prefix; first carries the
// representation's flag bits.
func appendInt(dst []byte, first byte, n uint8, v uint64) []byte {
	max := uint64(1)<<n - 1
	if v < max {
		return append(dst, first|byte(v))
	}
	dst = append(dst, first|byte(max))
	v -= max
	for v >= 128 {
		dst = append(dst, byte(v&0x7f|0x80))
		v >>= 7
	}
	return append(dst, byte(v))
}

// tableSizeUpdate is the block prefix that sets the peer's view of our
// encoder's dynamic table size.
func tableSizeUpdate(dst []byte, size uint32) []byte {
	return appendInt(dst, 0x20, 5, uint64(size))
}

var (
	errHpack       = errors.New("malformed HPACK header block")
	errHpackIndex  = errors.New("HPACK index out of range")
	errHpackSize   = errors.New("HPACK dynamic table size update above our limit")
	errBadStatus   = errors.New("malformed :status")
	errHpackString = errors.New("HPACK string too long")
)

// dynEntry is what the decoder keeps of a dynamic-table entry.
type dynEntry struct {
	nameLen, valueLen uint32
	isStatus          bool
	status            int32 // the code when isStatus and the value is valid, else 0
}

func (e dynEntry) size() uint32 { return e.nameLen + e.valueLen + entryOverhead }

// decoder tracks the server's HPACK encoder; see the note at the top.
type decoder struct {
	ring    []dynEntry // ring buffer; newest at (head-1), oldest at (head-n)
	head, n int
	size    uint32 // sum of entry sizes
	max     uint32 // current maximum, ≤ limit
	limit   uint32 // our SETTINGS_HEADER_TABLE_SIZE
	scratch bytes.Buffer
	lengths [4]huffLength // recently decoded Huffman strings
	next    int
}

// huffLength remembers a Huffman-coded string's decoded length. Servers
// such as nginx insert the same fields (server, content-type, date…) into
// the table with every response, so the client needs their decoded lengths
// over and over; comparing the coded bytes is cheaper than decoding them.
type huffLength struct {
	coded [48]byte
	n     uint8 // len(coded); 0: empty
	len   uint32
}

func newDecoder(limit uint32) *decoder {
	d := &decoder{max: limit, limit: limit, ring: make([]dynEntry, 64)}
	d.scratch.Grow(256)
	return d
}

// at returns the entry at a dynamic index (1 = newest).
func (d *decoder) at(i int) (dynEntry, bool) {
	if i < 1 || i > d.n {
		return dynEntry{}, false
	}
	j := d.head - i
	if j < 0 {
		j += len(d.ring)
	}
	return d.ring[j], true
}

func (d *decoder) insert(e dynEntry) {
	if e.size() > d.max {
		d.n, d.size = 0, 0 // an entry larger than the table empties it (§4.4)
		return
	}
	d.size += e.size()
	d.evict()
	if d.n == len(d.ring) {
		grown := make([]dynEntry, 2*len(d.ring)) // rare: a server inserting many small entries
		for i := 0; i < d.n; i++ {
			grown[i], _ = d.at(d.n - i)
		}
		d.ring, d.head = grown, d.n
	}
	d.ring[d.head] = e
	d.head = (d.head + 1) % len(d.ring)
	d.n++
}

// evict drops the oldest entries until the table fits its maximum.
func (d *decoder) evict() {
	for d.size > d.max && d.n > 0 {
		old, _ := d.at(d.n)
		d.size -= old.size()
		d.n--
	}
}

// decode processes one complete header block and returns the :status it
// carries (0 if none). The table is updated even when the caller ignores
// the block (a reset stream, trailers), and even when the block's :status is
// malformed (errBadStatus, returned once the whole block is processed).
func (d *decoder) decode(p []byte) (status int32, err error) {
	badStatus := false
	for len(p) > 0 {
		b := p[0]
		switch {
		case b&0x80 != 0: // indexed field
			var idx uint64
			if idx, p, err = readInt(p, 7); err != nil {
				return 0, err
			}
			switch {
			case idx == 0:
				return 0, errHpackIndex
			case idx <= uint64(staticLen):
				if idx >= staticStatusLo && idx <= staticStatusHi {
					status = parseStatus(staticTable[idx-1][1])
				}
			default:
				e, ok := d.at(int(idx) - staticLen)
				if !ok {
					return 0, errHpackIndex
				}
				if e.isStatus {
					badStatus = badStatus || e.status == 0
					status = e.status
				}
			}
		case b&0xe0 == 0x20: // dynamic table size update
			var size uint64
			if size, p, err = readInt(p, 5); err != nil {
				return 0, err
			}
			if size > uint64(d.limit) {
				return 0, errHpackSize
			}
			d.max = uint32(size)
			d.evict()
		default: // literal: with incremental indexing (01), without (0000) or never indexed (0001)
			indexing := b&0xc0 == 0x40
			prefix := uint8(4)
			if indexing {
				prefix = 6
			}
			var e dynEntry
			if p, e, err = d.literal(p, prefix, indexing); err != nil {
				return 0, err
			}
			if e.isStatus {
				badStatus = badStatus || e.status == 0
				status = e.status
			}
			if indexing {
				d.insert(e)
			}
		}
	}
	if badStatus {
		return 0, errBadStatus
	}
	return status, nil
}

// literal reads a literal field representation. The value is decoded only
// when its length or content matters.
func (d *decoder) literal(p []byte, prefix uint8, indexing bool) ([]byte, dynEntry, error) {
	var e dynEntry
	idx, p, err := readInt(p, prefix)
	if err != nil {
		return nil, e, err
	}
	switch {
	case idx == 0:
		var name []byte
		var huff bool
		if name, huff, p, err = readString(p); err != nil {
			return nil, e, err
		}
		if huff {
			if name, err = d.huffman(name); err != nil {
				return nil, e, err
			}
		}
		e.nameLen = uint32(len(name))
		e.isStatus = string(name) == ":status"
	case idx <= uint64(staticLen):
		e.nameLen = uint32(len(staticTable[idx-1][0]))
		e.isStatus = idx >= staticStatusLo && idx <= staticStatusHi
	default:
		ne, ok := d.at(int(idx) - staticLen)
		if !ok {
			return nil, e, errHpackIndex
		}
		e.nameLen, e.isStatus = ne.nameLen, ne.isStatus
	}
	value, huff, p, err := readString(p)
	if err != nil {
		return nil, e, err
	}
	switch {
	case huff && e.isStatus:
		if value, err = d.huffman(value); err != nil {
			return nil, e, err
		}
		e.valueLen = uint32(len(value))
	case huff && indexing:
		if e.valueLen, err = d.huffmanLen(value); err != nil {
			return nil, e, err
		}
	default:
		e.valueLen = uint32(len(value))
	}
	if e.isStatus {
		e.status = parseStatus(string(value)) // no allocation: the conversion is only compared
	}
	return p, e, nil
}

// huffmanLen returns the decoded length of a Huffman-coded string.
func (d *decoder) huffmanLen(v []byte) (uint32, error) {
	for i := range d.lengths {
		h := &d.lengths[i]
		if int(h.n) == len(v) && h.n > 0 && string(h.coded[:h.n]) == string(v) {
			return h.len, nil
		}
	}
	dec, err := d.huffman(v)
	if err != nil {
		return 0, err
	}
	if len(v) <= len(d.lengths[0].coded) {
		h := &d.lengths[d.next]
		d.next = (d.next + 1) % len(d.lengths)
		h.n = uint8(copy(h.coded[:], v))
		h.len = uint32(len(dec))
	}
	return uint32(len(dec)), nil
}

func (d *decoder) huffman(v []byte) ([]byte, error) {
	d.scratch.Reset()
	if _, err := hpack.HuffmanDecode(&d.scratch, v); err != nil {
		return nil, errHpack
	}
	return d.scratch.Bytes(), nil
}

// parseStatus returns a three-digit status code, or 0.
func parseStatus(s string) int32 {
	if len(s) != 3 {
		return 0
	}
	var v int32
	for i := 0; i < 3; i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0
		}
		v = v*10 + int32(c-'0')
	}
	if v < 100 {
		return 0
	}
	return v
}

func readInt(p []byte, n uint8) (uint64, []byte, error) {
	if len(p) == 0 {
		return 0, nil, errHpack
	}
	max := uint64(1)<<n - 1
	v := uint64(p[0]) & max
	p = p[1:]
	if v < max {
		return v, p, nil
	}
	for shift := uint(0); ; shift += 7 {
		if len(p) == 0 || shift > 56 {
			return 0, nil, errHpack
		}
		b := p[0]
		p = p[1:]
		v += uint64(b&0x7f) << shift
		if b&0x80 == 0 {
			return v, p, nil
		}
	}
}

func readString(p []byte) (s []byte, huff bool, rest []byte, err error) {
	if len(p) == 0 {
		return nil, false, nil, errHpack
	}
	huff = p[0]&0x80 != 0
	n, p, err := readInt(p, 7)
	if err != nil {
		return nil, false, nil, err
	}
	if n > uint64(len(p)) {
		return nil, false, nil, errHpackString
	}
	return p[:n], huff, p[n:], nil
}
