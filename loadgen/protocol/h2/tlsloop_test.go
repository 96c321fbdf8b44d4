package h2

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/sys/unix"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2wire"
)

func appendFrame(b []byte, typ http2.FrameType, flags http2.Flags, id uint32, p []byte) []byte {
	return append(h2wire.AppendFrameHeader(b, len(p), typ, flags, id), p...)
}

// A response whose last TLS record holds more plaintext than the Fed's
// read buffer has room for (a frame of the largest size half read in
// front of it): the rest, left in the tls.Conn, is read too, though no
// other record comes. Driven as a loop drives an opened connection.
func TestTLSMuxRecordLargerThanRoom(t *testing.T) {
	cfg := &tls.Config{Certificates: []tls.Certificate{testCert(t).TLS}, NextProtos: []string{"h2"},
		DynamicRecordSizingDisabled: true} // a Write of up to 16 KiB is one record
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		raw, err := ln.Accept()
		if err != nil {
			return
		}
		defer raw.Close()
		tc := tls.Server(raw, cfg)
		if tc.Handshake() != nil {
			return
		}
		// The answer goes once the client opened stream 1 (its HEADERS
		// came), not after a sleep a busy machine could outlast.
		opened := make(chan struct{})
		go func(opened chan struct{}) {
			if _, err := io.ReadFull(tc, make([]byte, len(h2wire.ClientPreface))); err != nil {
				return
			}
			fr := http2.NewFramer(io.Discard, tc)
			for {
				f, err := fr.ReadFrame()
				if err != nil {
					return
				}
				if h, ok := f.(*http2.HeadersFrame); ok && h.StreamID == 1 && opened != nil {
					close(opened)
					opened = nil
				}
			}
		}(opened)
		tc.Write(h2wire.AppendSettings(nil))
		select {
		case <-opened:
		case <-time.After(10 * time.Second):
			return
		}
		tc.Write(appendFrame(nil, http2.FrameHeaders, http2.FlagHeadersEndHeaders, 1, []byte{0x88})) // :status 200
		a := appendFrame(nil, http2.FrameData, 0, 1, make([]byte, 16384))                            // 16393 bytes
		b := appendFrame(nil, http2.FrameData, http2.FlagDataEndStream, 1, make([]byte, 16370))      // 16379 bytes
		tc.Write(a[:16384])                                                                          // the Fed's buffer: 16384 of a
		tc.Write(a[16384:16388])                                                                     // 16388: room for 16380 more
		tc.Write(append(a[16388:], b...))                                                            // a record of 16384 bytes: 4 do not fit
		<-t.Context().Done()                                                                         // the connection stays open until the test ends
	}()

	d, err := NewDialer(Config{URL: "https://" + ln.Addr().String() + "/", TLS: protocol.TLS{Insecure: true}})
	if err != nil {
		t.Fatal(err)
	}
	fd, m, err := d.Open(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	flush := func() {
		for out := m.Output(); len(out) > 0; out = m.Output() {
			n, err := unix.Write(fd, out)
			if err != nil {
				t.Fatal(err)
			}
			m.Wrote(n)
		}
	}
	flush()
	started, done := false, false
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end) && !done && !m.Dead(); {
		unix.Poll(pfd, 50)
		n, err := unix.Read(fd, m.ReadBuf())
		if err == unix.EAGAIN {
			continue
		}
		if err != nil || n == 0 {
			t.Fatalf("read: %d %v", n, err)
		}
		for _, k := range m.Filled(n) {
			if k == 0 {
				done = true
			}
		}
		if m.Ready() && !started {
			if how, _ := m.Start(0); how != protocol.MuxStarted {
				t.Fatal("not started")
			}
			started = true
		}
		flush()
	}
	if !done {
		t.Fatalf("the response never completed: its last bytes of plaintext were left in the tls.Conn (dead %v)", m.Dead())
	}
	if o := m.Outcome(0); o.Err != protocol.None || o.Status != 200 {
		t.Errorf("outcome %+v, want a 200", o)
	}
}
