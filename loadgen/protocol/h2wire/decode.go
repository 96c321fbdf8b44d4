package h2wire

import (
	"bytes"
	"errors"
	"slices"

	"golang.org/x/net/http2/hpack"
)

// HPACK decoding (RFC 7541) of a peer's header blocks. The client reads a
// few fields of a response (:status, grpc-status …) and nothing else, but
// must keep the peer's dynamic table in step whatever it holds. A Decoder
// keeps of each table entry its size and, when its name is one the caller
// wants, its value; other values are Huffman-decoded only when their length
// is needed, and not at all when they are not added to the table. Decoding
// allocates nothing once the table's slots have their buffers.

var (
	errHPACK         = errors.New("HPACK: malformed header block")
	errHPACKIndex    = errors.New("HPACK: index out of range")
	errHPACKString   = errors.New("HPACK: string longer than the block")
	errHPACKHuffman  = errors.New("HPACK: bad Huffman code")
	errHPACKSize     = errors.New("HPACK: dynamic table size update above our limit")
	errHPACKLateSize = errors.New("HPACK: dynamic table size update after a header field")
)

// Decoder decodes the header blocks of one connection, in order. It is not
// safe for concurrent use.
type Decoder struct {
	names   []string         // the names whose values the caller wants
	static  [staticLen]uint8 // per static entry: 1 + its index in names, or 0
	ring    []entry          // the dynamic table; newest at head-1, oldest at head-n
	values  [][]byte         // per slot of ring: the value of a wanted entry; buffers stay with slots
	head, n int
	size    uint32 // sum of entry sizes
	max     uint32 // the table's current maximum size, at most limit
	limit   uint32 // our SETTINGS_HEADER_TABLE_SIZE
	scratch bytes.Buffer
	lengths [4]huffLength // recently decoded Huffman strings
	next    int
}

// entry is what a Decoder keeps of a dynamic table entry (and, in values,
// the value of a wanted one).
type entry struct {
	nameLen uint32
	size    uint32 // nameLen + the value's length + entryOverhead
	want    uint8  // 1 + the name's index in Decoder.names, or 0
}

// huffLength remembers the decoded length of a Huffman-coded string.
// Servers such as NGINX add the same fields (server, content-type, date…)
// to the table with every response, so their decoded lengths are needed
// over and over; comparing the coded bytes is cheaper than decoding them.
type huffLength struct {
	coded [48]byte
	n     uint8 // len(coded); 0: empty
	len   uint32
}

// NewDecoder returns a decoder for a peer told that our table holds
// tableSize bytes (SETTINGS_HEADER_TABLE_SIZE; DefaultTableSize unless the
// client sent another). Decode reports the fields named in names (lowercase,
// at most 255 of them) and no others.
func NewDecoder(tableSize uint32, names ...string) *Decoder {
	if len(names) > 255 {
		panic("h2wire: more than 255 wanted header names")
	}
	d := &Decoder{
		names:  slices.Clone(names),
		max:    tableSize,
		limit:  tableSize,
		ring:   make([]entry, 64),
		values: make([][]byte, 64),
	}
	for i, e := range staticTable {
		d.static[i] = d.want(e.name)
	}
	d.scratch.Grow(256)
	return d
}

// want returns 1 + the index of name in d.names, or 0.
func (d *Decoder) want(name string) uint8 {
	for i, n := range d.names {
		if n == name {
			return uint8(i + 1)
		}
	}
	return 0
}

// Decode processes one complete header block. For each field named in the
// Decoder's names, in the order of the block, it calls field with the
// index of the name and the value, which is valid only during the call and
// must not be modified (field may be nil when there are no names). The table is updated whatever the caller
// does with the block (a reset stream, trailers). An error is the peer
// breaking HPACK: a connection error (COMPRESSION_ERROR) after which the
// Decoder is out of step.
func (d *Decoder) Decode(block []byte, field func(name int, value []byte)) error {
	p := block
	start := true // a table size update may come only before the first field
	for len(p) > 0 {
		b := p[0]
		var err error
		switch {
		case b&0x80 != 0: // indexed field
			var idx uint64
			if idx, p, err = readInt(p, 7); err != nil {
				return err
			}
			if err = d.indexed(idx, field); err != nil {
				return err
			}
		case b&0xe0 == 0x20: // dynamic table size update
			if !start {
				return errHPACKLateSize
			}
			var size uint64
			if size, p, err = readInt(p, 5); err != nil {
				return err
			}
			if size > uint64(d.limit) {
				return errHPACKSize
			}
			d.max = uint32(size)
			d.evict()
			continue
		default: // literal: with incremental indexing (01), without (0000), never indexed (0001)
			if p, err = d.literal(p, field); err != nil {
				return err
			}
		}
		start = false
	}
	return nil
}

// indexed handles an indexed field.
func (d *Decoder) indexed(idx uint64, field func(int, []byte)) error {
	switch {
	case idx == 0:
		return errHPACKIndex
	case idx <= uint64(staticLen):
		if w := d.static[idx-1]; w > 0 {
			field(int(w)-1, staticValues[idx-1])
		}
	default:
		j, ok := d.slot(idx - uint64(staticLen))
		if !ok {
			return errHPACKIndex
		}
		if w := d.ring[j].want; w > 0 {
			field(int(w)-1, d.values[j])
		}
	}
	return nil
}

// literal handles a literal field. Its value is decoded only when the
// caller wants it or its length matters.
func (d *Decoder) literal(p []byte, field func(int, []byte)) ([]byte, error) {
	indexing := p[0]&0xc0 == 0x40
	prefix := uint8(4)
	if indexing {
		prefix = 6
	}
	idx, p, err := readInt(p, prefix)
	if err != nil {
		return nil, err
	}
	var e entry
	switch {
	case idx == 0:
		var name []byte
		var huff bool
		if name, huff, p, err = readString(p); err != nil {
			return nil, err
		}
		if huff {
			if name, err = d.huffman(name); err != nil {
				return nil, err
			}
		}
		e.nameLen = uint32(len(name))
		e.want = d.want(string(name)) // no allocation: the conversion is only compared
	case idx <= uint64(staticLen):
		e.nameLen = uint32(len(staticTable[idx-1].name))
		e.want = d.static[idx-1]
	default:
		j, ok := d.slot(idx - uint64(staticLen))
		if !ok {
			return nil, errHPACKIndex
		}
		e.nameLen, e.want = d.ring[j].nameLen, d.ring[j].want
	}
	value, huff, p, err := readString(p)
	if err != nil {
		return nil, err
	}
	valueLen := uint32(len(value))
	switch {
	case e.want > 0:
		if huff {
			if value, err = d.huffman(value); err != nil {
				return nil, err
			}
			valueLen = uint32(len(value))
		}
		field(int(e.want)-1, value)
	case huff && indexing:
		if valueLen, err = d.huffmanLen(value); err != nil {
			return nil, err
		}
	}
	if indexing {
		e.size = e.nameLen + valueLen + entryOverhead
		d.insert(e, value)
	}
	return p, nil
}

// slot returns the ring slot of the dynamic table entry of index i (1: the
// newest).
func (d *Decoder) slot(i uint64) (int, bool) {
	if i < 1 || i > uint64(d.n) {
		return 0, false
	}
	j := d.head - int(i)
	if j < 0 {
		j += len(d.ring)
	}
	return j, true
}

// insert adds an entry to the table, evicting the oldest to make room; the
// value is kept when the caller wants it.
func (d *Decoder) insert(e entry, value []byte) {
	if e.size > d.max {
		d.n, d.size = 0, 0 // an entry larger than the table empties it (§4.4)
		return
	}
	d.size += e.size
	d.evict()
	if d.n == len(d.ring) { // rare: a peer adding many small entries
		ring, values := make([]entry, 2*d.n), make([][]byte, 2*d.n)
		for i := 0; i < d.n; i++ {
			j, _ := d.slot(uint64(d.n - i))
			ring[i], values[i] = d.ring[j], d.values[j]
		}
		d.ring, d.values, d.head = ring, values, d.n
	}
	d.ring[d.head] = e
	if e.want > 0 {
		d.values[d.head] = append(d.values[d.head][:0], value...)
	}
	if d.head++; d.head == len(d.ring) {
		d.head = 0
	}
	d.n++
}

// evict drops the oldest entries until the table fits its maximum; the
// size of an entry being inserted is counted already.
func (d *Decoder) evict() {
	for d.size > d.max && d.n > 0 {
		j, _ := d.slot(uint64(d.n))
		d.size -= d.ring[j].size
		d.n--
	}
}

// huffmanLen returns the decoded length of a Huffman-coded string.
func (d *Decoder) huffmanLen(v []byte) (uint32, error) {
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

// huffman decodes a Huffman-coded string into the scratch buffer.
func (d *Decoder) huffman(v []byte) ([]byte, error) {
	d.scratch.Reset()
	if _, err := hpack.HuffmanDecode(&d.scratch, v); err != nil {
		return nil, errHPACKHuffman
	}
	return d.scratch.Bytes(), nil
}

// readInt reads an integer with an n-bit prefix (RFC 7541 §5.1).
func readInt(p []byte, n uint8) (uint64, []byte, error) {
	if len(p) == 0 {
		return 0, nil, errHPACK
	}
	max := uint64(1)<<n - 1
	v := uint64(p[0]) & max
	p = p[1:]
	if v < max {
		return v, p, nil
	}
	for shift := uint(0); shift < 63 && len(p) > 0; shift += 7 {
		b := p[0]
		p = p[1:]
		v += uint64(b&0x7f) << shift
		if b&0x80 == 0 {
			return v, p, nil
		}
	}
	return 0, nil, errHPACK
}

// readString reads a string literal, still Huffman-coded if huff.
func readString(p []byte) (s []byte, huff bool, rest []byte, err error) {
	if len(p) == 0 {
		return nil, false, nil, errHPACK
	}
	huff = p[0]&0x80 != 0
	n, p, err := readInt(p, 7)
	if err != nil {
		return nil, false, nil, err
	}
	if n > uint64(len(p)) {
		return nil, false, nil, errHPACKString
	}
	return p[:n], huff, p[n:], nil
}
