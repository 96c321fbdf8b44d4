package h2wire

import "golang.org/x/net/http2/hpack"

// HPACK encoding (RFC 7541) of a request sent again and again: the blocks
// are encoded once. The first request on a connection adds the fields that
// are not in the static table to the peer's dynamic table; every later
// request refers to those entries, a few bytes per request, as h2load and
// browsers do. Nothing else is ever inserted (a client sends no other
// header blocks), so the entries stay put as long as the peer's table keeps
// its size.

// Field is a header field; its name is lowercase.
type Field struct{ Name, Value string }

// RequestBlocks are the header blocks of a request.
type RequestBlocks struct {
	First   []byte // the first request on a connection: adds the fields that fit to the peer's table
	Steady  []byte // every later request: refers to them
	Literal []byte // a request that relies on no dynamic table entry
	Size    uint32 // how much of the peer's table First fills
	Partial bool   // some fields did not fit: First and Steady send them as literals
}

// EncodeRequest encodes a request's header fields for a peer whose HPACK
// table holds tableSize bytes (its SETTINGS_HEADER_TABLE_SIZE). A table
// above DefaultTableSize is used only up to DefaultTableSize: that is its
// size until the client's encoder says otherwise, and it never does. Fields
// are added to the table in order while they fit, the others sent as
// literals.
func EncodeRequest(fields []Field, tableSize uint32) RequestBlocks {
	return encode(fields, nil, tableSize)
}

// EncodeRequests encodes the requests of a mix, any of which may go
// first on a connection: the fields that every request has, in the same
// order (a scheme, an authority, a user agent, the headers all share),
// are added to the peer's table by whichever request goes first and
// referred to by every later one; a field only some have (a path, a
// method of its own) is sent as a literal, never indexed, so that the
// table holds the same entries whatever went first. Every request's
// blocks fill the same Size of it.
func EncodeRequests(lists [][]Field, tableSize uint32) []RequestBlocks {
	// The shared fields: the first list's, but those of the static
	// table, that every other list has in the same order.
	var shared []Field
	for _, f := range lists[0] {
		if exact, _ := staticIndex(f); exact == 0 {
			shared = append(shared, f)
		}
	}
	for _, l := range lists[1:] {
		var kept []Field
		at := 0
		for _, f := range shared {
			for j := at; j < len(l); j++ {
				if l[j] == f {
					kept, at = append(kept, f), j+1
					break
				}
			}
		}
		shared = kept
	}
	out := make([]RequestBlocks, len(lists))
	for i, l := range lists {
		insert := make([]bool, len(l))
		at := 0
		for k, f := range l {
			if at < len(shared) && f == shared[at] {
				insert[k] = true
				at++
			}
		}
		out[i] = encode(l, insert, tableSize)
	}
	return out
}

// encode encodes fields, those that insert marks (every one when nil)
// added to the peer's table while they fit.
func encode(fields []Field, insert []bool, tableSize uint32) RequestBlocks {
	tableSize = min(tableSize, DefaultTableSize)
	var b RequestBlocks
	order := make([]int, len(fields)) // per field: its order in the table, 1 first; 0 static; -1 literal
	inserted := 0
	for i, f := range fields {
		exact, name := staticIndex(f)
		size := uint32(len(f.Name) + len(f.Value) + entryOverhead)
		switch {
		case exact > 0:
			b.First = appendInt(b.First, 0x80, 7, uint64(exact))
			b.Literal = appendInt(b.Literal, 0x80, 7, uint64(exact))
			continue
		case insert != nil && !insert[i]:
			order[i] = -1
			b.First = appendLiteral(b.First, 0x00, 4, name, f) // without indexing
		case b.Size+size <= tableSize:
			b.Size += size
			inserted++
			order[i] = inserted
			b.First = appendLiteral(b.First, 0x40, 6, name, f) // with incremental indexing
		default:
			b.Partial = true
			order[i] = -1
			b.First = appendLiteral(b.First, 0x00, 4, name, f) // without indexing
		}
		b.Literal = appendLiteral(b.Literal, 0x00, 4, name, f)
	}
	// After First, the field added last is dynamic index 1 (absolute
	// staticLen+1), the field added first staticLen+inserted.
	for i, f := range fields {
		exact, name := staticIndex(f)
		switch o := order[i]; {
		case o > 0:
			b.Steady = appendInt(b.Steady, 0x80, 7, uint64(staticLen+inserted-o+1))
		case o < 0:
			b.Steady = appendLiteral(b.Steady, 0x00, 4, name, f)
		default:
			b.Steady = appendInt(b.Steady, 0x80, 7, uint64(exact))
		}
	}
	return b
}

// AppendTableSizeUpdate appends a dynamic table size update: the start of
// a header block that tells the peer's decoder the table now holds size
// bytes (after the peer lowered SETTINGS_HEADER_TABLE_SIZE).
func AppendTableSizeUpdate(dst []byte, size uint32) []byte {
	return appendInt(dst, 0x20, 5, uint64(size))
}

// StaticNameIndex is the static table's index of a field named name, or
// 0 when it has none.
func StaticNameIndex(name string) int {
	_, idx := staticIndex(Field{Name: name})
	return idx
}

// AppendLiteralValue appends a field as a literal never added to the
// table (RFC 7541 §6.2.2), its name by nameIdx (StaticNameIndex; 0: the
// name follows), its value raw: how a value that varies per request is
// sent. It allocates only when dst has no room.
func AppendLiteralValue(dst []byte, nameIdx int, name string, value []byte) []byte {
	dst = appendInt(dst, 0x00, 4, uint64(nameIdx))
	if nameIdx == 0 {
		dst = appendString(dst, name)
	}
	dst = appendInt(dst, 0, 7, uint64(len(value)))
	return append(dst, value...)
}

// appendLiteral appends a literal field whose representation starts with
// first and has an n-bit name index (0: the name follows).
func appendLiteral(dst []byte, first byte, n uint8, nameIdx int, f Field) []byte {
	dst = appendInt(dst, first, n, uint64(nameIdx))
	if nameIdx == 0 {
		dst = appendString(dst, f.Name)
	}
	return appendString(dst, f.Value)
}

// appendString appends a string literal, Huffman-coded when that is shorter.
func appendString(dst []byte, s string) []byte {
	if n := hpack.HuffmanEncodeLength(s); n < uint64(len(s)) {
		dst = appendInt(dst, 0x80, 7, n)
		return hpack.AppendHuffmanString(dst, s)
	}
	dst = appendInt(dst, 0, 7, uint64(len(s)))
	return append(dst, s...)
}

// appendInt appends an integer with an n-bit prefix (RFC 7541 §5.1); first
// carries the representation's pattern bits.
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
