package grpc

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"golang.org/x/net/http2/hpack"
)

// collector records every field, for comparing decoders.
type collector []string

func (c *collector) add(name, value []byte) {
	*c = append(*c, string(name)+": "+string(value))
}

func decodeAll(t testing.TB, d *hpackDecoder, block []byte) ([]string, error) {
	var c collector
	err := d.decode(block, &c)
	return c, err
}

func TestHPACKDecoder(t *testing.T) {
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
	for _, size := range []uint32{0, 100, 512, 4096} {
		var buf bytes.Buffer
		enc := hpack.NewEncoder(&buf)
		enc.SetMaxDynamicTableSizeLimit(size)
		enc.SetMaxDynamicTableSize(size)
		ours := newHPACKDecoder(4096)
		theirs := hpack.NewDecoder(4096, nil)
		for i, fields := range blocks {
			buf.Reset()
			for _, f := range fields {
				enc.WriteField(f)
			}
			want, err := theirs.DecodeFull(buf.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeAll(t, ours, buf.Bytes())
			if err != nil {
				t.Fatalf("table %d, block %d: %v", size, i, err)
			}
			var ws []string
			for _, f := range want {
				ws = append(ws, f.Name+": "+f.Value)
			}
			if strings.Join(got, "\n") != strings.Join(ws, "\n") {
				t.Fatalf("table %d, block %d:\n%s\nwant\n%s", size, i, strings.Join(got, "\n"), strings.Join(ws, "\n"))
			}
		}
	}
}

func TestHPACKDecoderRejects(t *testing.T) {
	for name, block := range map[string][]byte{
		"index 0":           {0x80},
		"index past table":  {0xff, 0x10},
		"truncated integer": {0xff},
		"truncated string":  {0x00, 0x05, 'a'},
		"size above max":    {0x3f, 0xe2, 0x1f}, // 31 + 98 + 31<<7 = 4097
		"late size update":  {0x88, 0x20},
		"bad huffman":       {0x00, 0x81, 0xff, 0x81, 0xff},
	} {
		if _, err := decodeAll(t, newHPACKDecoder(4096), block); err == nil {
			t.Errorf("%s: decoded % x", name, block)
		}
	}
}

func FuzzHPACKDecoder(f *testing.F) {
	f.Add([]byte{0x88, 0x40, 0x01, 'a', 0x01, 'b', 0xbe})
	f.Fuzz(func(t *testing.T, block []byte) {
		ours, err := decodeAll(t, newHPACKDecoder(4096), block)
		theirs, err2 := hpack.NewDecoder(4096, nil).DecodeFull(block)
		if err == nil && err2 == nil {
			var ws []string
			for _, f := range theirs {
				ws = append(ws, f.Name+": "+f.Value)
			}
			if strings.Join(ours, "\n") != strings.Join(ws, "\n") {
				t.Fatalf("decoders differ:\n%q\n%q", ours, ws)
			}
		}
	})
}
