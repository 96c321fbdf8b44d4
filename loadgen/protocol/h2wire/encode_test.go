package h2wire

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/net/http2/hpack"
)

func decodeAll(t *testing.T, d *hpack.Decoder, block []byte) []Field {
	t.Helper()
	fs, err := d.DecodeFull(block)
	if err != nil {
		t.Fatalf("x/net/hpack cannot decode %x: %v", block, err)
	}
	var out []Field
	for _, f := range fs {
		out = append(out, Field{f.Name, f.Value})
	}
	return out
}

func TestEncodeRequest(t *testing.T) {
	fields := []Field{
		{":method", "GET"}, {":scheme", "https"}, {":authority", "example.test:8443"},
		{":path", "/a/b?c=d"}, {"user-agent", "loadgen"}, {"accept-encoding", "gzip, deflate"},
		{"x-dup", "1"}, {"x-dup", "1"}, {"x-long", strings.Repeat("v", 300)},
	}
	b := EncodeRequest(fields, DefaultTableSize)
	want := fmt.Sprint(fields)

	d := hpack.NewDecoder(DefaultTableSize, nil)
	if got := fmt.Sprint(decodeAll(t, d, b.First)); got != want {
		t.Fatalf("first block decodes to %s, want %s", got, want)
	}
	for i := 0; i < 3; i++ {
		if got := fmt.Sprint(decodeAll(t, d, b.Steady)); got != want {
			t.Fatalf("steady block decodes to %s, want %s", got, want)
		}
	}
	// The literal block works against any table, including an empty one
	// announced by a size update.
	if got := fmt.Sprint(decodeAll(t, d, b.Literal)); got != want {
		t.Fatalf("literal block decodes to %s, want %s", got, want)
	}
	d0 := hpack.NewDecoder(DefaultTableSize, nil)
	if got := fmt.Sprint(decodeAll(t, d0, append(AppendTableSizeUpdate(nil, 0), b.Literal...))); got != want {
		t.Fatalf("literal block decodes to %s, want %s", got, want)
	}
	if len(b.Steady) > 12 {
		t.Errorf("steady block is %d bytes, want one byte per field", len(b.Steady))
	}
	size := 0
	for _, f := range fields[2:] {
		if f.Name != "accept-encoding" {
			size += len(f.Name) + len(f.Value) + 32
		}
	}
	if b.Size != uint32(size) || b.Partial {
		t.Errorf("size = %d, partial %v, want %d and false", b.Size, b.Partial, size)
	}
}

// The blocks decode to the request's fields, the first and every later
// one, whatever room the peer's table has.
func TestEncodeRequestTableSizes(t *testing.T) {
	fields := []Field{
		{":method", "POST"}, {":scheme", "http"}, {":path", "/loadgen.echo.v1.Echo/Unary"},
		{":authority", "echo.example"}, {"content-type", "application/grpc"}, {"user-agent", "loadgen"},
		{"te", "trailers"}, {"x-a", "1"}, {"x-long", strings.Repeat("v", 3000)}, {"x-b", "2"},
	}
	want := fmt.Sprint(fields)
	for _, table := range []uint32{0, 64, 200, 4096, 65536} {
		b := EncodeRequest(fields, table)
		if b.Size > table || b.Size > DefaultTableSize {
			t.Errorf("table %d: blocks use %d bytes of it", table, b.Size)
		}
		if b.Partial != (table < 4096) {
			t.Errorf("table %d: partial %v", table, b.Partial)
		}
		dec := hpack.NewDecoder(DefaultTableSize, nil)
		dec.SetAllowedMaxDynamicTableSize(table) // as an HTTP/2 server that said so does
		first := b.First
		if table < DefaultTableSize {
			first = append(AppendTableSizeUpdate(nil, table), first...)
		}
		for i, block := range [][]byte{first, b.Steady, b.Steady, b.Literal, b.Steady} {
			if got := fmt.Sprint(decodeAll(t, dec, block)); got != want {
				t.Fatalf("table %d, block %d decodes to\n%s\nwant\n%s", table, i, got, want)
			}
		}
		if table == 4096 && len(b.Steady) >= len(b.First)/4 {
			t.Errorf("later blocks are %d bytes, the first %d: not indexed", len(b.Steady), len(b.First))
		}
	}
}

func TestAppendInt(t *testing.T) {
	for _, v := range []uint64{0, 1, 30, 31, 126, 127, 128, 255, 1337, 1 << 20, 1<<32 + 5} {
		for _, n := range []uint8{4, 5, 6, 7} {
			b := appendInt(nil, 0, n, v)
			got, rest, err := readInt(b, n)
			if err != nil || got != v || len(rest) != 0 {
				t.Errorf("n=%d v=%d: %x decodes to %d, %x, %v", n, v, b, got, rest, err)
			}
		}
	}
	for _, tc := range []struct {
		n    uint8
		v    uint64
		want []byte
	}{ // RFC 7541 C.1
		{5, 10, []byte{0x0a}},
		{5, 1337, []byte{0x1f, 0x9a, 0x0a}},
		{8, 42, []byte{0x2a}},
	} {
		if got := appendInt(nil, 0, tc.n, tc.v); !bytes.Equal(got, tc.want) {
			t.Errorf("appendInt(%d, %d) = % x, want % x", tc.n, tc.v, got, tc.want)
		}
	}
}
