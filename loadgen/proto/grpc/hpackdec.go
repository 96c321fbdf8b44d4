package grpc

import (
	"bytes"
	"errors"

	"golang.org/x/net/http2/hpack"
)

// hpackDecoder decodes response header blocks (RFC 7541) and hands each
// field to a responseFields as byte slices, valid during the call. Only a
// field added to the dynamic table is copied; x/net's decoder makes a
// string of every literal, which would be allocations per call with
// servers that do not index (NGINX).
type hpackDecoder struct {
	max     uint32 // the table size this client allows (SETTINGS_HEADER_TABLE_SIZE)
	limit   uint32 // the table size the peer chose, at most max
	size    uint32
	entries []hpackEntry // the dynamic table, oldest first
	name    bytes.Buffer // Huffman-decoded name
	value   bytes.Buffer // Huffman-decoded value
}

type hpackEntry struct{ name, value []byte }

// maxHeaderString bounds a header name or value.
const maxHeaderString = 64 << 10

var (
	errHPACK = errors.New("HPACK: malformed header block")
	// staticTable is RFC 7541's, index 1 to 61, as x/net's decoder has it.
	staticTable = func() []hpackEntry {
		t := make([]hpackEntry, 62)
		d := hpack.NewDecoder(0, nil)
		for i := 1; i < len(t); i++ {
			f, err := d.DecodeFull([]byte{0x80 | byte(i)})
			if err != nil || len(f) != 1 {
				panic("hpack static table")
			}
			t[i] = hpackEntry{[]byte(f[0].Name), []byte(f[0].Value)}
		}
		return t
	}()
)

func newHPACKDecoder(max uint32) *hpackDecoder {
	return &hpackDecoder{max: max, limit: max}
}

// fieldSink takes decoded header fields.
type fieldSink interface {
	add(name, value []byte)
}

// decode decodes one whole header block into f.
func (d *hpackDecoder) decode(p []byte, f fieldSink) error {
	first := true
	for len(p) > 0 {
		b := p[0]
		var err error
		switch {
		case b&0x80 != 0: // indexed field
			var i uint64
			if i, p, err = readInt(7, p); err != nil {
				return err
			}
			e, ok := d.at(i)
			if !ok {
				return errHPACK
			}
			f.add(e.name, e.value)
		case b&0xc0 == 0x40: // literal, added to the table
			var name, value []byte
			if name, value, p, err = d.literal(6, p); err != nil {
				return err
			}
			d.add(name, value)
			f.add(name, value)
		case b&0xe0 == 0x20: // table size update, first in a block
			var v uint64
			if v, p, err = readInt(5, p); err != nil {
				return err
			}
			if !first || v > uint64(d.max) {
				return errHPACK
			}
			d.limit = uint32(v)
			d.evict(0)
		default: // literal not indexed (0000), never indexed (0001)
			var name, value []byte
			if name, value, p, err = d.literal(4, p); err != nil {
				return err
			}
			f.add(name, value)
		}
		first = false
	}
	return nil
}

// at returns the table entry of index i (static, then dynamic).
func (d *hpackDecoder) at(i uint64) (hpackEntry, bool) {
	if i == 0 {
		return hpackEntry{}, false
	}
	if i < uint64(len(staticTable)) {
		return staticTable[i], true
	}
	i -= uint64(len(staticTable))
	if i >= uint64(len(d.entries)) {
		return hpackEntry{}, false
	}
	return d.entries[len(d.entries)-1-int(i)], true
}

// literal reads a literal field whose name index has an n-bit prefix.
func (d *hpackDecoder) literal(n uint8, p []byte) (name, value, rest []byte, err error) {
	var i uint64
	if i, p, err = readInt(n, p); err != nil {
		return nil, nil, nil, err
	}
	if i > 0 {
		e, ok := d.at(i)
		if !ok {
			return nil, nil, nil, errHPACK
		}
		name = e.name
	} else if name, p, err = readString(p, &d.name); err != nil {
		return nil, nil, nil, err
	}
	if value, p, err = readString(p, &d.value); err != nil {
		return nil, nil, nil, err
	}
	return name, value, p, nil
}

// add puts a field in the dynamic table, evicting the oldest to fit.
func (d *hpackDecoder) add(name, value []byte) {
	size := uint32(len(name) + len(value) + 32)
	if size > d.limit {
		d.evict(d.limit + 1) // too large: the table ends up empty
		return
	}
	d.evict(size)
	b := make([]byte, len(name)+len(value))
	copy(b, name)
	copy(b[len(name):], value)
	d.entries = append(d.entries, hpackEntry{b[:len(name)], b[len(name):]})
	d.size += size
}

// evict drops the oldest entries until room more bytes fit.
func (d *hpackDecoder) evict(room uint32) {
	k := 0
	for k < len(d.entries) && d.size+room > d.limit {
		e := d.entries[k]
		d.size -= uint32(len(e.name) + len(e.value) + 32)
		k++
	}
	if k > 0 {
		n := copy(d.entries, d.entries[k:])
		clear(d.entries[n:])
		d.entries = d.entries[:n]
	}
}

// readInt reads an HPACK integer with an n-bit prefix (RFC 7541 5.1).
func readInt(n uint8, p []byte) (uint64, []byte, error) {
	if len(p) == 0 {
		return 0, nil, errHPACK
	}
	max := uint64(1)<<n - 1
	v := uint64(p[0]) & max
	p = p[1:]
	if v < max {
		return v, p, nil
	}
	for shift := uint(0); len(p) > 0 && shift < 63; shift += 7 {
		b := p[0]
		p = p[1:]
		v += uint64(b&0x7f) << shift
		if b&0x80 == 0 {
			return v, p, nil
		}
	}
	return 0, nil, errHPACK
}

// readString reads a string literal, Huffman-decoded into buf if need be.
func readString(p []byte, buf *bytes.Buffer) (s, rest []byte, err error) {
	if len(p) == 0 {
		return nil, nil, errHPACK
	}
	huff := p[0]&0x80 != 0
	n, p, err := readInt(7, p)
	if err != nil || n > uint64(len(p)) || n > maxHeaderString {
		return nil, nil, errHPACK
	}
	s, p = p[:n], p[n:]
	if huff {
		buf.Reset()
		if _, err := hpack.HuffmanDecode(buf, s); err != nil || buf.Len() > maxHeaderString {
			return nil, nil, errHPACK
		}
		s = buf.Bytes()
	}
	return s, p, nil
}
