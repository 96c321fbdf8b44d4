package h2conn

import (
	"strings"
	"testing"

	"golang.org/x/net/http2/hpack"

	"loadgen/loadgen/protocol/h2wire"
)

// The header blocks a connection sends decode to the request headers, the
// first and every later one, whatever room the peer's HPACK table has
// (its SETTINGS_HEADER_TABLE_SIZE, before the first request).
func TestHeaderBlocks(t *testing.T) {
	fields := []h2wire.Field{
		{Name: ":method", Value: "POST"},
		{Name: ":scheme", Value: "https"},
		{Name: ":path", Value: "/loadgen.echo.v1.Echo/Unary"},
		{Name: ":authority", Value: "echo.example"},
		{Name: "content-type", Value: "application/grpc"},
		{Name: "user-agent", Value: "loadgen"},
		{Name: "te", Value: "trailers"},
		{Name: "x-a", Value: "1"},
		{Name: "x-long", Value: strings.Repeat("v", 3000)},
	}
	var want []string
	for _, f := range fields {
		want = append(want, f.Name+": "+f.Value)
	}
	d := NewDialer(Config{Fields: fields})
	for _, table := range []uint32{0, 64, 200, 4096, 65536} {
		c := newConn(d, false)
		c.peerTableSizeLocked(table) // as the server's first SETTINGS does
		if used := c.blocks[0].Size; used > table || used > h2wire.DefaultTableSize {
			t.Errorf("table %d: blocks use %d bytes of it", table, used)
		}
		dec := hpack.NewDecoder(4096, nil)
		dec.SetAllowedMaxDynamicTableSize(table) // as an HTTP/2 server that said so does
		var first, next []byte
		for i := range 4 {
			block := c.nextBlockLocked()
			if i == 0 {
				first = block
			} else {
				next = block
			}
			hf, err := dec.DecodeFull(block)
			if err != nil {
				t.Fatalf("table %d, block %d: %v", table, i, err)
			}
			var got []string
			for _, f := range hf {
				got = append(got, f.Name+": "+f.Value)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("table %d, block %d decodes to\n%s\nwant\n%s", table, i, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
		if table == 4096 && len(next) >= len(first)/4 {
			t.Errorf("later blocks are %d bytes, the first %d: not indexed", len(next), len(first))
		}
	}
}

// The server shrinks its table after the first request: the next block
// says so first, and what no longer fits goes as literals.
func TestHeaderTableShrinks(t *testing.T) {
	fields := []h2wire.Field{{Name: ":method", Value: "GET"}, {Name: ":path", Value: "/x"}, {Name: "x-a", Value: strings.Repeat("a", 100)}}
	c := newConn(NewDialer(Config{Fields: fields}), false)
	dec := hpack.NewDecoder(4096, nil)
	for i, table := range []uint32{4096, 4096, 64, 64, 4096, 0, 0} {
		c.peerTableSizeLocked(table)
		dec.SetAllowedMaxDynamicTableSize(table)
		hf, err := dec.DecodeFull(c.nextBlockLocked())
		if err != nil || len(hf) != 3 || hf[2].Value != fields[2].Value {
			t.Fatalf("block %d (table %d): %v %v", i, table, hf, err)
		}
	}
}

// nextBlockLocked is the whole header block the next request would send:
// the table size update, if any, and the block.
func (c *Conn) nextBlockLocked() []byte {
	b := append([]byte(nil), c.hpPrefix...)
	c.hpPrefix = c.hpPrefix[:0]
	return append(b, c.blockLocked(0)...)
}
