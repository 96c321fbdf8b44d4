package http2

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"golang.org/x/net/http2/hpack"
)

func decodeAll(t *testing.T, d *hpack.Decoder, block []byte) []headerField {
	t.Helper()
	fs, err := d.DecodeFull(block)
	if err != nil {
		t.Fatalf("x/net/hpack cannot decode %x: %v", block, err)
	}
	var out []headerField
	for _, f := range fs {
		out = append(out, headerField{f.Name, f.Value})
	}
	return out
}

func TestEncodeRequest(t *testing.T) {
	fields := []headerField{
		{":method", "GET"}, {":scheme", "https"}, {":authority", "example.test:8443"},
		{":path", "/a/b?c=d"}, {"user-agent", "loadgen"}, {"accept-encoding", "gzip, deflate"},
		{"x-dup", "1"}, {"x-dup", "1"}, {"x-long", strings.Repeat("v", 300)},
	}
	b := encodeRequest(fields)
	want := fmt.Sprint(fields)

	d := hpack.NewDecoder(defaultTableSize, nil)
	if got := fmt.Sprint(decodeAll(t, d, b.first)); got != want {
		t.Fatalf("first block decodes to %s, want %s", got, want)
	}
	for i := 0; i < 3; i++ {
		if got := fmt.Sprint(decodeAll(t, d, b.steady)); got != want {
			t.Fatalf("steady block decodes to %s, want %s", got, want)
		}
	}
	// The literal block works against any table, including an empty one
	// announced by a size update.
	if got := fmt.Sprint(decodeAll(t, d, b.literal)); got != want {
		t.Fatalf("literal block decodes to %s, want %s", got, want)
	}
	d0 := hpack.NewDecoder(defaultTableSize, nil)
	if got := fmt.Sprint(decodeAll(t, d0, append(tableSizeUpdate(nil, 0), b.literal...))); got != want {
		t.Fatalf("literal block decodes to %s, want %s", got, want)
	}
	if len(b.steady) > 12 {
		t.Errorf("steady block is %d bytes, want one byte per field", len(b.steady))
	}
	size := 0
	for _, f := range fields[2:] {
		if f.name != "accept-encoding" {
			size += len(f.name) + len(f.value) + 32
		}
	}
	if b.size != size {
		t.Errorf("size = %d, want %d", b.size, size)
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
	if b := appendInt(nil, 0, 5, 1337); !bytes.Equal(b, []byte{31, 154, 10}) { // RFC 7541 C.1.2
		t.Errorf("1337 = %x", b)
	}
}

// TestDecoder checks the decoder against x/net's encoder over a long
// sequence of responses that insert, refer to and evict entries.
func TestDecoder(t *testing.T) {
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	ref := hpack.NewDecoder(defaultTableSize, nil)
	dec := newDecoder(defaultTableSize)
	rng := rand.New(rand.NewPCG(1, 2))
	codes := []string{"200", "201", "204", "302", "404", "418", "500", "503", "100", "103"}
	for i := 0; i < 5000; i++ {
		buf.Reset()
		if i%500 == 7 {
			enc.SetMaxDynamicTableSize(uint32(rng.IntN(defaultTableSize + 1))) // a size update
		}
		code := codes[rng.IntN(len(codes))]
		enc.WriteField(hpack.HeaderField{Name: ":status", Value: code})
		for j := rng.IntN(6); j > 0; j-- {
			enc.WriteField(hpack.HeaderField{
				Name:      fmt.Sprintf("x-h%d", rng.IntN(20)),
				Value:     strings.Repeat("abcdefgh", rng.IntN(40)) + fmt.Sprint(rng.IntN(5)),
				Sensitive: rng.IntN(10) == 0,
			})
		}
		if rng.IntN(3) == 0 {
			enc.WriteField(hpack.HeaderField{Name: "date", Value: fmt.Sprintf("Mon, 30 Nov 2026 00:%02d:%02d GMT", rng.IntN(60), rng.IntN(60))})
		}
		fs, err := ref.DecodeFull(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		status, err := dec.decode(buf.Bytes())
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		if want := fs[0].Value; fmt.Sprint(status) != want {
			t.Fatalf("response %d: status %d, want %s", i, status, want)
		}
	}
}

func TestDecoderErrors(t *testing.T) {
	d := newDecoder(defaultTableSize)
	for name, block := range map[string][]byte{
		"index 0":            {0x80},
		"index past table":   {0x80 | 70},
		"truncated int":      {0xff},
		"truncated string":   {0x40, 0x05, 'a'},
		"size over limit":    {0x3f, 0xe2, 0x1f}, // 4097
		"bad status":         {0x08, 0x02, '2', '0'},
		"bad status literal": {0x48, 0x03, '2', 'x', '0'},
	} {
		if _, err := d.decode(block); err == nil {
			t.Errorf("%s: %x decoded without error", name, block)
		}
	}
	// A bad :status is reported once the block is processed: the table
	// stays in step.
	d = newDecoder(defaultTableSize)
	if _, err := d.decode([]byte{0x48, 0x01, 'x', 0x40, 0x01, 'a', 0x01, 'b'}); err != errBadStatus {
		t.Errorf("bad :status: %v", err)
	}
	if d.n != 2 {
		t.Errorf("%d entries after a block with a bad :status, want 2", d.n)
	}
	// :status sent as a new name, with Huffman coding.
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	enc.WriteField(hpack.HeaderField{Name: ":status", Value: "299", Sensitive: true})
	if st, err := newDecoder(defaultTableSize).decode(buf.Bytes()); st != 299 || err != nil {
		t.Errorf("%x: %d, %v", buf.Bytes(), st, err)
	}
}

func TestDecoderAllocs(t *testing.T) {
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	fields := []hpack.HeaderField{{Name: ":status", Value: "200"}, {Name: "server", Value: "nginx/1.22.1"},
		{Name: "content-type", Value: "text/plain"}, {Name: "content-length", Value: "100"}}
	for _, f := range fields {
		enc.WriteField(f)
	}
	d := newDecoder(defaultTableSize)
	d.decode(buf.Bytes())
	buf.Reset()
	for _, f := range fields {
		enc.WriteField(f)
	}
	steady := bytes.Clone(buf.Bytes())
	literal := []byte{0x0f, 0x21, 0x8a} // literal without indexing, Huffman value
	literal = hpack.AppendHuffmanString(literal, "Mon, 30 Nov 2026 00:00:00 GMT")
	literal[2] = 0x80 | byte(len(literal)-3)
	if n := testing.AllocsPerRun(100, func() {
		d.decode(steady)
		d.decode(literal)
	}); n != 0 {
		t.Errorf("%v allocations per decode", n)
	}
}

func FuzzDecode(f *testing.F) {
	f.Add([]byte{0x88})
	f.Add([]byte{0x48, 0x03, '2', '0', '1', 0xbe})
	f.Add([]byte{0x3f, 0xe1, 0x1f, 0x20})
	f.Fuzz(func(t *testing.T, b []byte) {
		d := newDecoder(defaultTableSize)
		d.decode(b)
		d.decode(b)
	})
}
