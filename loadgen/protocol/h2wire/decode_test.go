package h2wire

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"loadgen/internal/allocs"
	"loadgen/internal/race"

	"golang.org/x/net/http2/hpack"
)

// decode runs d over a block and returns the wanted fields as "name: value".
func decode(d *Decoder, block []byte) ([]string, error) {
	var got []string
	err := d.Decode(block, func(i int, v []byte) {
		got = append(got, d.names[i]+": "+string(v))
	})
	return got, err
}

// reference decodes a block with x/net's decoder and keeps the fields
// named in names, as "name: value".
func reference(d *hpack.Decoder, block []byte, names []string) ([]string, error) {
	fs, err := d.DecodeFull(block)
	var got []string
	for _, f := range fs {
		for _, n := range names {
			if f.Name == n {
				got = append(got, f.Name+": "+f.Value)
			}
		}
	}
	return got, err
}

// wantSets are the names a test's decoders want: everything the tests
// send, the clients' few, none.
func wantSets(extra ...string) map[string][]string {
	all := extra
	for _, e := range staticTable {
		if !strings.Contains(strings.Join(all, "\n"), e.name) {
			all = append(all, e.name)
		}
	}
	return map[string][]string{
		"all":   all,
		"grpc":  {":status", "content-type", "grpc-status"},
		"http2": {":status"},
		"none":  nil,
	}
}

// TestDecoder checks the decoder against x/net's over a long sequence of
// responses that insert, refer to and evict entries, and resize the table.
func TestDecoder(t *testing.T) {
	var extra []string
	for i := range 20 {
		extra = append(extra, fmt.Sprintf("x-h%d", i))
	}
	for name, names := range wantSets(extra...) {
		t.Run(name, func(t *testing.T) {
			var buf bytes.Buffer
			enc := hpack.NewEncoder(&buf)
			ref := hpack.NewDecoder(DefaultTableSize, nil)
			dec := NewDecoder(DefaultTableSize, names...)
			rng := rand.New(rand.NewPCG(1, 2))
			codes := []string{"200", "201", "204", "302", "404", "418", "500", "503", "100", "103"}
			for i := 0; i < 5000; i++ {
				buf.Reset()
				if i%500 == 7 {
					enc.SetMaxDynamicTableSize(uint32(rng.IntN(DefaultTableSize + 1))) // a size update
				}
				enc.WriteField(hpack.HeaderField{Name: ":status", Value: codes[rng.IntN(len(codes))]})
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
				if rng.IntN(4) == 0 {
					enc.WriteField(hpack.HeaderField{Name: "grpc-status", Value: fmt.Sprint(rng.IntN(17))})
				}
				want, err := reference(ref, buf.Bytes(), names)
				if err != nil {
					t.Fatal(err)
				}
				got, err := decode(dec, buf.Bytes())
				if err != nil {
					t.Fatalf("response %d: %v", i, err)
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("response %d:\n%s\nwant\n%s", i, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
		})
	}
}

// TestDecoderTableSizes decodes gRPC-like responses from encoders with tables
// of several sizes, with Huffman-coded and raw names and values.
func TestDecoderTableSizes(t *testing.T) {
	var blocks [][]hpack.HeaderField
	for i := range 50 {
		blocks = append(blocks, []hpack.HeaderField{
			{Name: ":status", Value: "200"},
			{Name: "content-type", Value: "application/grpc"},
			{Name: "date", Value: fmt.Sprintf("Mon, 30 Nov 2026 00:00:%02d GMT", i%7)},
			{Name: "x-big", Value: strings.Repeat("b", 100*(i%5))},
			{Name: "grpc-status", Value: fmt.Sprint(i % 3)},
			{Name: "grpc-message", Value: "ok", Sensitive: i%2 == 0},
			{Name: "x-Raw", Value: "\x00\xff"},
		})
	}
	for name, names := range wantSets("x-big", "grpc-status", "grpc-message", "x-Raw") {
		for _, size := range []uint32{0, 100, 512, 4096} {
			var buf bytes.Buffer
			enc := hpack.NewEncoder(&buf)
			enc.SetMaxDynamicTableSizeLimit(size)
			enc.SetMaxDynamicTableSize(size)
			ours := NewDecoder(4096, names...)
			theirs := hpack.NewDecoder(4096, nil)
			for i, fields := range blocks {
				buf.Reset()
				for _, f := range fields {
					enc.WriteField(f)
				}
				want, err := reference(theirs, buf.Bytes(), names)
				if err != nil {
					t.Fatal(err)
				}
				got, err := decode(ours, buf.Bytes())
				if err != nil {
					t.Fatalf("%s, table %d, block %d: %v", name, size, i, err)
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("%s, table %d, block %d:\n%s\nwant\n%s", name, size, i, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
			}
		}
	}
}

func TestDecoderRejects(t *testing.T) {
	for name, block := range map[string][]byte{
		"index 0":                 {0x80},
		"index past table":        {0x80 | 70},
		"index far past table":    {0xff, 0x10},
		"literal name past table": {0x4f, 0x10, 0x01, 'a'},
		"truncated integer":       {0xff},
		"integer overflow":        {0xff, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01},
		"truncated string":        {0x40, 0x05, 'a'},
		"truncated value":         {0x00, 0x01, 'a', 0x05, 'b'},
		"size above max":          {0x3f, 0xe2, 0x1f}, // 31 + 98 + 31<<7 = 4097
		"late size update":        {0x88, 0x20},
		"bad huffman name":        {0x00, 0x81, 0xff, 0x81, 0xff},
		"bad huffman, indexed":    {0x40, 0x01, 'a', 0x81, 0xff},
	} {
		for _, names := range [][]string{nil, {"a", ":status"}} {
			if _, err := decode(NewDecoder(DefaultTableSize, names...), block); err == nil {
				t.Errorf("%s: decoded % x", name, block)
			}
		}
	}
	// Size updates may come one after another at the start of a block.
	if _, err := decode(NewDecoder(DefaultTableSize), []byte{0x20, 0x3f, 0xe1, 0x1f, 0x88}); err != nil {
		t.Errorf("two size updates: %v", err)
	}
}

// The table stays in step over fields that are not wanted, and over a
// field added to a table too small for it.
func TestDecoderTable(t *testing.T) {
	d := NewDecoder(DefaultTableSize, ":status")
	got, err := decode(d, []byte{0x48, 0x01, 'x', 0x40, 0x01, 'a', 0x01, 'b'})
	if err != nil || strings.Join(got, ",") != ":status: x" {
		t.Fatalf("%q, %v", got, err)
	}
	if d.n != 2 || d.size != 1+7+32+1+1+32 {
		t.Errorf("%d entries of %d bytes, want 2 of 74", d.n, d.size)
	}
	if got, err = decode(d, []byte{0xbe, 0xbf, 0xbe}); err != nil || strings.Join(got, ",") != ":status: x" {
		t.Errorf("%q, %v", got, err)
	}
	// Down to 40 bytes: the older entry (:status) goes; then an entry
	// larger than the table empties it.
	if _, err = decode(d, []byte{0x3f, 0x09}); err != nil || d.n != 1 {
		t.Fatalf("%d entries, %v", d.n, err)
	}
	if _, err = decode(d, []byte{0xbf}); err == nil {
		t.Error("evicted entry still indexed")
	}
	if _, err = decode(d, []byte{0x48, 0x03, '2', '0', '4'}); err != nil || d.n != 0 || d.size != 0 {
		t.Errorf("%d entries of %d bytes, %v", d.n, d.size, err)
	}
}

// The ring of entries grows when a peer adds many small ones, keeping them
// in order.
func TestDecoderGrow(t *testing.T) {
	d := NewDecoder(1<<16, "a")
	var block []byte
	for i := range 300 {
		block = append(block, 0x40, 0x01, 'a', 0x03)
		block = fmt.Appendf(block, "%03d", i)
	}
	if _, err := decode(d, block); err != nil {
		t.Fatal(err)
	}
	refs := appendInt([]byte{0xbe}, 0x80, 7, 62+299) // the newest, the oldest
	got, err := decode(d, refs)
	if err != nil || strings.Join(got, ",") != "a: 299,a: 000" {
		t.Errorf("%q, %v", got, err)
	}
}

func TestDecoderAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are measured without -race (make test)")
	}
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	fields := []hpack.HeaderField{{Name: ":status", Value: "200"}, {Name: "server", Value: "nginx/1.22.1"},
		{Name: "content-type", Value: "text/plain"}, {Name: "content-length", Value: "100"},
		{Name: "grpc-status", Value: "0"}}
	for _, f := range fields {
		enc.WriteField(f)
	}
	d := NewDecoder(DefaultTableSize, ":status", "content-type", "grpc-status")
	if err := d.Decode(buf.Bytes(), func(int, []byte) {}); err != nil {
		t.Fatal(err)
	}
	buf.Reset()
	for _, f := range fields {
		enc.WriteField(f)
	}
	steady := bytes.Clone(buf.Bytes())
	literal := []byte{0x0f, 0x21, 0x8a} // date, literal without indexing, Huffman value
	literal = hpack.AppendHuffmanString(literal, "Mon, 30 Nov 2026 00:00:00 GMT")
	literal[2] = 0x80 | byte(len(literal)-3)
	var inserted []byte // content-type and server added anew, as NGINX does
	for _, v := range []string{"text/html", "nginx/1.22.1"} {
		inserted = append(inserted, 0x40|31)
		inserted = appendString(inserted, v)
		inserted = append(inserted, 0x40|54)
		inserted = appendString(inserted, v)
	}
	for range 200 { // warm up: every slot of the table gets its buffer
		d.Decode(inserted, func(int, []byte) {})
	}
	n := 0
	decodeAll := func() {
		for _, b := range [][]byte{steady, literal, inserted} {
			if err := d.Decode(b, func(_ int, v []byte) { n += len(v) }); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The process's own background work (seen once in CI) is what
	// allocs.Slack leaves room for; an allocation of Decode's shows 100 times.
	if n := allocs.Count(100, decodeAll); n > allocs.Slack {
		t.Errorf("%d allocations in 100 decodes", n)
	}
}

// FuzzDecode compares the decoder with x/net's: where both accept a block
// (twice, so that the second refers to what the first added), they report
// the same fields; where x/net accepts, so does the decoder, but for a late
// table size update, which RFC 7541 §4.2 forbids and x/net lets by when
// its table is empty.
func FuzzDecode(f *testing.F) {
	f.Add([]byte{0x88})
	f.Add([]byte{0x48, 0x03, '2', '0', '1', 0xbe})
	f.Add([]byte{0x3f, 0xe1, 0x1f, 0x20})
	f.Add([]byte{0x88, 0x40, 0x01, 'a', 0x01, 'b', 0xbe})
	names := wantSets("a", "b", "x")
	f.Fuzz(func(t *testing.T, block []byte) {
		for _, set := range []string{"all", "grpc"} {
			ours := NewDecoder(DefaultTableSize, names[set]...)
			theirs := hpack.NewDecoder(DefaultTableSize, nil)
			for i := range 2 {
				got, err := decode(ours, block)
				want, err2 := reference(theirs, block, names[set])
				if err2 != nil {
					break
				}
				if err != nil {
					if err != errHPACKLateSize {
						t.Fatalf("%s, pass %d: x/net decodes, ours: %v", set, i, err)
					}
					break
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("%s, pass %d: decoders differ:\n%q\n%q", set, i, got, want)
				}
			}
		}
	})
}
