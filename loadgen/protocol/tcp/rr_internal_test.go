package tcp

import (
	"bytes"
	"context"
	"testing"
	"time"

	"loadgen/targets/tcpecho"
)

// The bytes read back are the bytes sent, not merely as many.
func TestRREchoesPayload(t *testing.T) {
	s, err := tcpecho.New(tcpecho.Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, size := range []int{1, DefaultSize, readBufMax} { // one read buffer holds it all
		d, err := NewDialer(Config{Addr: s.Addr(), Mode: RR, Size: size})
		if err != nil {
			t.Fatal(err)
		}
		c, err := d.Dial(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		rc := c.(*rrConn)
		for range 3 {
			clear(rc.buf)
			if out := rc.Do(context.Background(), time.Now().Add(10*time.Second)); out.Err != 0 {
				t.Fatalf("size %d: Do = %+v", size, out)
			}
			if !bytes.Equal(rc.buf, d.payload) {
				t.Fatalf("size %d: the response differs from the request", size)
			}
		}
		c.Close()
	}
}

func TestFill(t *testing.T) {
	for _, n := range []int{1, 5, 37, 38, 1000, 1 << 20} {
		b := fill(n)
		if len(b) != n {
			t.Fatalf("fill(%d) has %d bytes", n, len(b))
		}
		if b[0] == SinkMagic[0] {
			t.Fatalf("fill(%d) starts like SinkMagic: the target would wait to tell", n)
		}
		if i := bytes.IndexByte(b, 0); i >= 0 {
			t.Fatalf("fill(%d) has a zero byte at %d", n, i)
		}
	}
}
