package h2wire

import (
	"bytes"
	"testing"

	"golang.org/x/net/http2/hpack"
)

// benchBlocks are response header blocks to decode again and again: a
// grpc-go server's headers and trailers once its table holds them (all
// indexed), and an NGINX-style response that adds its fields to the table
// anew each time (literals with incremental indexing, Huffman-coded).
func benchBlocks() (warmup, grpcSteady, nginx []byte) {
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	fields := []hpack.HeaderField{
		{Name: ":status", Value: "200"}, {Name: "content-type", Value: "application/grpc"},
		{Name: "grpc-status", Value: "0"}, {Name: "grpc-message", Value: ""},
	}
	for _, f := range fields {
		enc.WriteField(f)
	}
	warmup = bytes.Clone(buf.Bytes())
	buf.Reset()
	for _, f := range fields {
		enc.WriteField(f)
	}
	grpcSteady = bytes.Clone(buf.Bytes())

	nginx = []byte{0x88} // :status 200
	for _, f := range []Field{
		{"server", "nginx/1.27.3"}, {"date", "Mon, 30 Nov 2026 00:00:00 GMT"},
		{"content-type", "text/plain"}, {"content-length", "100"},
	} {
		_, name := staticIndex(f)
		nginx = appendLiteral(nginx, 0x40, 6, name, f)
	}
	return warmup, grpcSteady, nginx
}

func BenchmarkDecode(b *testing.B) {
	warmup, grpcSteady, nginx := benchBlocks()
	for _, bc := range []struct {
		name  string
		block []byte
		names []string
	}{
		{"grpc-steady", grpcSteady, []string{":status", "content-type", "grpc-status"}},
		{"nginx-status", nginx, []string{":status"}},
		{"nginx-grpc-names", nginx, []string{":status", "content-type", "grpc-status"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			d := NewDecoder(DefaultTableSize, bc.names...)
			if err := d.Decode(warmup, func(int, []byte) {}); err != nil {
				b.Fatal(err)
			}
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				if err := d.Decode(bc.block, func(_ int, v []byte) { n += len(v) }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
