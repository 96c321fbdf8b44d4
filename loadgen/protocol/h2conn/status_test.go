package h2conn

import (
	"bytes"
	"testing"

	"loadgen/internal/allocs"
	"loadgen/internal/race"

	"golang.org/x/net/http2/hpack"
)

// The decoder itself is tested in h2wire, against x/net's: here, what the
// connection makes of :status.

// statusDecoder decodes header blocks as a connection does, for no stream.
type statusDecoder struct{ c *Conn }

func newStatusDecoder() statusDecoder { return statusDecoder{newConn(NewDialer(Config{}), false)} }

func decodeStatus(d statusDecoder, block []byte) (int32, error) { return d.c.decodeLocked(nil, block) }

func TestDecodeStatus(t *testing.T) {
	d := newStatusDecoder()
	for name, block := range map[string][]byte{
		"index 0":            {0x80},
		"index past table":   {0x80 | 70},
		"truncated int":      {0xff},
		"truncated string":   {0x40, 0x05, 'a'},
		"size over limit":    {0x3f, 0xe2, 0x1f}, // 4097
		"bad status":         {0x08, 0x02, '2', '0'},
		"bad status literal": {0x48, 0x03, '2', 'x', '0'},
	} {
		if _, err := decodeStatus(d, block); err == nil {
			t.Errorf("%s: %x decoded without error", name, block)
		}
	}
	// A bad :status is reported once the block is processed: the table
	// stays in step.
	d = newStatusDecoder()
	if _, err := decodeStatus(d, []byte{0x48, 0x01, 'x', 0x40, 0x01, 'a', 0x01, 'b'}); err != errBadStatus {
		t.Errorf("bad :status: %v", err)
	}
	if st, err := decodeStatus(d, []byte{0xbe, 0x88}); st != 200 || err != nil { // a: b, then :status 200
		t.Errorf("after a bad :status: %d, %v", st, err)
	}
	if _, err := decodeStatus(d, []byte{0xbf}); err != errBadStatus { // the bad :status, indexed
		t.Errorf("bad :status from the table: %v", err)
	}
	// :status sent as a new name, with Huffman coding.
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	enc.WriteField(hpack.HeaderField{Name: ":status", Value: "299", Sensitive: true})
	if st, err := decodeStatus(newStatusDecoder(), buf.Bytes()); st != 299 || err != nil {
		t.Errorf("%x: %d, %v", buf.Bytes(), st, err)
	}
}

func TestDecodeStatusAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are measured without -race (make test)")
	}
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	fields := []hpack.HeaderField{{Name: ":status", Value: "200"}, {Name: "server", Value: "nginx/1.22.1"},
		{Name: "content-type", Value: "text/plain"}, {Name: "content-length", Value: "100"}}
	for _, f := range fields {
		enc.WriteField(f)
	}
	d := newStatusDecoder()
	decodeStatus(d, buf.Bytes())
	buf.Reset()
	for _, f := range fields {
		enc.WriteField(f)
	}
	steady := bytes.Clone(buf.Bytes())
	literal := []byte{0x0f, 0x21, 0x8a} // literal without indexing, Huffman value
	literal = hpack.AppendHuffmanString(literal, "Mon, 30 Nov 2026 00:00:00 GMT")
	literal[2] = 0x80 | byte(len(literal)-3)
	if n := allocs.Count(100, func() {
		decodeStatus(d, steady)
		decodeStatus(d, literal)
	}); n > allocs.Slack {
		t.Errorf("%d allocations in 100 decodes", n)
	}
}
