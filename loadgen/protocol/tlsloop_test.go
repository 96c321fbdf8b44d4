package protocol

import (
	"bytes"
	"crypto/tls"
	"io"
	"math/rand/v2"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"loadgen/targets/tlscert"
)

// plainMux is a Mux of plaintext for the TLS layer's tests: it keeps
// what it is fed and has out to write.
type plainMux struct {
	got  []byte
	rbuf [64 << 10]byte
	out  []byte
	fail int
}

func (m *plainMux) Output() []byte           { return m.out }
func (m *plainMux) Wrote(n int)              { m.out = m.out[n:] }
func (m *plainMux) ReadBuf() []byte          { return m.rbuf[:] }
func (m *plainMux) Filled(n int) []int32     { m.got = append(m.got, m.rbuf[:n]...); return nil }
func (m *plainMux) Fail(ErrClass) []int32    { m.fail++; return nil }
func (m *plainMux) Ready() bool              { return true }
func (m *plainMux) Usable() bool             { return true }
func (m *plainMux) Dead() bool               { return false }
func (m *plainMux) Goodbye() []byte          { return nil }
func (m *plainMux) Start(int) (int, Outcome) { return MuxStarted, Outcome{} }
func (m *plainMux) Outcome(int) Outcome      { return Outcome{} }
func (m *plainMux) Cancel(int) Outcome       { return Outcome{} }

// handedOff dials a TLS server that runs serve on its side, does the
// handshake and hands the connection off: the socket and the Mux.
func handedOff(t *testing.T, serve func(*tls.Conn)) (int, Mux, *plainMux) {
	t.Helper()
	return handedOffWith(t, &tls.Config{InsecureSkipVerify: true}, 1, func(c net.Conn) net.Conn { return c }, serve)
}

// handedOffWith is handedOff with the client's config, a server that
// sends its certificate copies times over (a chain of that length), and
// the server's socket seen through wrap. What the handshake left to write
// is written, as a loop does at the end of its turn.
func handedOffWith(t *testing.T, cfg *tls.Config, copies int, wrap func(net.Conn) net.Conn, serve func(*tls.Conn)) (int, Mux, *plainMux) {
	t.Helper()
	fd, m, inner := handOff(t, cfg, copies, wrap, serve)
	if out := m.Output(); len(out) > 0 {
		if n, err := unix.Write(fd, out); err != nil || n != len(out) {
			t.Fatalf("writing the handshake's last %d bytes: %d, %v", len(out), n, err)
		}
		m.Wrote(len(out))
	}
	return fd, m, inner
}

// handOff is handedOffWith leaving what the handshake left to write in
// the Mux's Output.
func handOff(t *testing.T, cfg *tls.Config, copies int, wrap func(net.Conn) net.Conn, serve func(*tls.Conn)) (int, Mux, *plainMux) {
	t.Helper()
	cert, err := tlscert.New(tlscert.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	for range copies - 1 {
		cert.TLS.Certificate = append(cert.TLS.Certificate, cert.TLS.Certificate[0])
	}
	raw := serveTLSOnce(t, cert.TLS, wrap, func(tc *tls.Conn) {
		if tc.Handshake() == nil {
			serve(tc)
		}
	})
	lt := LoopTLSClient(raw, cfg)
	if err := lt.Handshake(); err != nil {
		t.Fatal(err)
	}
	fd, err := lt.Handoff()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	inner := &plainMux{}
	return fd, TLSMux(inner, lt), inner
}

// serveTLSOnce listens on loopback, serves one TLS connection with cert
// (its socket seen through wrap) and returns the client's TCP connection
// to it; both go when the test ends.
func serveTLSOnce(t *testing.T, cert tls.Certificate, wrap func(net.Conn) net.Conn, serve func(*tls.Conn)) net.Conn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		serve(tls.Server(wrap(c), &tls.Config{Certificates: []tls.Certificate{cert}}))
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return raw
}

// readAll reads fd into m, as a loop does, until want bytes of plaintext
// came or m failed, for at most 10 s; each read takes at most chunk bytes
// (0: what ReadBuf offers).
func readAll(t *testing.T, fd int, m Mux, inner *plainMux, want, chunk int) {
	t.Helper()
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for end := time.Now().Add(10 * time.Second); len(inner.got) < want && !m.Dead(); {
		if time.Now().After(end) {
			t.Fatalf("%d of %d bytes in 10 s", len(inner.got), want)
		}
		unix.Poll(fds, 100)
		b := m.ReadBuf()
		if chunk > 0 && len(b) > chunk {
			b = b[:chunk]
		}
		n, err := unix.Read(fd, b)
		if err == unix.EAGAIN {
			continue
		}
		if err != nil || n == 0 {
			m.Fail(Read)
			return
		}
		m.Filled(n)
	}
}

// Records of every size, read in pieces of every size: the plaintext
// comes out whole and in order, and what the client writes reaches the
// server.
func TestTLSMuxRecords(t *testing.T) {
	sent := make([]byte, 0, 1<<20)
	r := rand.New(rand.NewPCG(1, 2))
	sizes := []int{1, 5, 16 << 10, 16<<10 + 1, 100, 40 << 10}
	for len(sent) < 1<<20 {
		n := sizes[len(sent)%len(sizes)] + r.IntN(300)
		for range n {
			sent = append(sent, byte(r.Uint32()))
		}
	}
	echoed := make(chan []byte, 1)
	fd, m, inner := handedOff(t, func(tc *tls.Conn) {
		for at := 0; at < len(sent); {
			n := min(len(sent)-at, sizes[at%len(sizes)])
			if _, err := tc.Write(sent[at : at+n]); err != nil {
				return
			}
			at += n
		}
		b := make([]byte, 11)
		io.ReadFull(tc, b)
		echoed <- b
	})
	q := len(sent) / 4
	for _, r := range []struct{ upTo, chunk int }{{q, 0}, {q + 8<<10, 1}, {2 * q, 7}, {len(sent), 4096}} {
		readAll(t, fd, m, inner, r.upTo, r.chunk)
	}
	if !bytes.Equal(inner.got, sent) {
		t.Fatalf("%d bytes of plaintext, not the %d the server sent", len(inner.got), len(sent))
	}
	if m.Dead() || inner.fail != 0 {
		t.Fatal("the connection failed")
	}
	if m.(*tlsMux).t.p.in != nil {
		t.Error("every record is handed, yet the connection keeps its room for ciphertext")
	}
	inner.out = []byte("from client")
	for out := m.Output(); len(out) > 0; out = m.Output() {
		n, err := unix.Write(fd, out)
		if err != nil && err != unix.EAGAIN {
			t.Fatal(err)
		}
		m.Wrote(max(n, 0))
	}
	select {
	case b := <-echoed:
		if string(b) != "from client" {
			t.Errorf("the server read %q", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server read nothing")
	}
}

// The handshake reads greedily: a TLS 1.3 server's session ticket, sent
// with its Finished, is read with it, waits in the pipe at the handoff
// (Buffered), and is fed as if just read. The connection goes on: the
// server's data comes out whole. A flight larger than the handshake's
// room (a long chain of certificates) is read in pieces.
func TestTLSHandoffBuffered(t *testing.T) {
	for _, copies := range []int{1, 40} {
		cfg := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS13, ClientSessionCache: tls.NewLRUClientSessionCache(1)}
		// The server's writes wait for its reads (a FlightConn never
		// handshaken): its flight reaches the client in one piece.
		fd, m, inner := handedOffWith(t, cfg, copies, func(c net.Conn) net.Conn { return &FlightConn{Conn: c} }, func(tc *tls.Conn) {
			tc.Write([]byte("after the ticket"))
			tc.NetConn().(*FlightConn).Read(nil) // flush
			<-t.Context().Done()                 // the connection stays open until the test ends
		})
		p := m.(*tlsMux).t.p
		if n := len(m.(*tlsMux).t.ConnectionState().PeerCertificates); n != copies {
			t.Fatalf("%d certificates, not %d", n, copies)
		}
		// One certificate: the flight (1.2 KiB) comes in one read, ticket
		// and all. Forty: it is read in pieces of the handshake's room, and
		// the ticket may be cut between the last of them and the loop's
		// first read.
		switch buffered := m.(*tlsMux).Buffered(); {
		case buffered:
			m.Filled(0)
			if m.Dead() || inner.fail != 0 || len(inner.got) != 0 {
				t.Fatalf("feeding the ticket: dead %v, %d failures, %q read", m.Dead(), inner.fail, inner.got)
			}
			if p.in != nil {
				t.Error("the ticket is handed, yet the connection keeps its room for ciphertext")
			}
		case copies == 1:
			t.Fatal("the server's ticket came with its Finished, yet nothing is buffered at the handoff")
		}
		readAll(t, fd, m, inner, len("after the ticket"), 0)
		if string(inner.got) != "after the ticket" || m.Dead() {
			t.Errorf("read %q, dead %v", inner.got, m.Dead())
		}
		if p.in != nil {
			t.Error("every record is handed, yet the connection keeps its room for ciphertext")
		}
	}
}

// The handshake's last flight waits for the loop: TLS 1.3's Finished,
// which no read of the client's follows, is in the Output at the handoff —
// the server's handshake is not over until the loop writes it, with the
// first request, in one write. A TLS 1.2 handshake ends on the client's
// read of the server's Finished, which sent the client's: nothing waits.
func TestTLSHandoffHoldsFinished(t *testing.T) {
	for _, v := range []uint16{tls.VersionTLS13, tls.VersionTLS12} {
		shaken := make(chan struct{})
		cfg := &tls.Config{InsecureSkipVerify: true, MinVersion: v, MaxVersion: v}
		fd, m, inner := handOff(t, cfg, 1, func(c net.Conn) net.Conn { return c }, func(tc *tls.Conn) {
			close(shaken)
			b := make([]byte, 7)
			if _, err := io.ReadFull(tc, b); err == nil {
				tc.Write(append(b, " echoed"...))
			}
		})
		held := len(m.Output())
		if v == tls.VersionTLS13 {
			// The server cannot end its handshake while the client's
			// Finished waits: 200 ms of not ending shows it.
			select {
			case <-shaken:
				t.Fatal("TLS 1.3: the server's handshake ended before the client's Finished was written")
			case <-time.After(200 * time.Millisecond):
			}
		} else {
			// It ends with the client's: how soon its goroutine says so is
			// the machine's business (a bound, not a timing assertion).
			select {
			case <-shaken:
			case <-time.After(10 * time.Second):
				t.Fatal("TLS 1.2: the server's handshake did not end with the client's")
			}
		}
		if (held > 0) != (v == tls.VersionTLS13) {
			t.Fatalf("%s: %d bytes of the handshake wait at the handoff", tls.VersionName(v), held)
		}
		inner.out = []byte("request")
		out := m.Output()
		if len(out) <= held {
			t.Fatalf("%s: the request is not in the Output (%d bytes, %d of them the handshake's)", tls.VersionName(v), len(out), held)
		}
		if n, err := unix.Write(fd, out); err != nil || n != len(out) {
			t.Fatalf("one write of %d bytes: %d, %v", len(out), n, err)
		}
		m.Wrote(len(out))
		readAll(t, fd, m, inner, len("request echoed"), 0)
		if string(inner.got) != "request echoed" || m.Dead() {
			t.Errorf("%s: read %q, dead %v", tls.VersionName(v), inner.got, m.Dead())
		}
	}
}

// A record that is not TLS's (bytes written around the TLS layer) fails
// the connection, as a read error of the Mux's requests.
func TestTLSMuxBadRecord(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
	}{
		{"bad MAC", []byte{23, 3, 3, 0, 20, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}},
		{"too long", []byte{23, 3, 3, 0xff, 0xff, 1, 2, 3}},
		{"not TLS", []byte("HTTP/1.1 400 Bad Request\r\n\r\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fd, m, inner := handedOff(t, func(c *tls.Conn) {
				c.Write([]byte("hello"))
				c.NetConn().Write(tc.b)
				<-t.Context().Done() // the connection stays open until the test ends: its end is not what fails it
			})
			readAll(t, fd, m, inner, 1<<20, 0)
			if !m.Dead() || inner.fail != 1 || string(inner.got) != "hello" {
				t.Errorf("dead %v, %d failures, read %q: want the connection failed after hello", m.Dead(), inner.fail, inner.got)
			}
		})
	}
}

// The server's close_notify ends the connection: a read error, no
// request left waiting.
func TestTLSMuxCloseNotify(t *testing.T) {
	fd, m, inner := handedOff(t, func(c *tls.Conn) {
		c.Write([]byte("bye"))
		c.CloseWrite()
		<-t.Context().Done() // open until the test ends: the close_notify, not the close, ends it
	})
	readAll(t, fd, m, inner, 1<<20, 0)
	if !m.Dead() || inner.fail != 1 || string(inner.got) != "bye" {
		t.Errorf("dead %v, %d failures, read %q", m.Dead(), inner.fail, inner.got)
	}
}

// The pipe hands the tls.Conn a record at a time, whatever the pieces the
// bytes come in and the buffers it is read into: what it hands is the
// input, in order, no Read crosses a record's end, and a Read with
// nothing whole to hand waits (it never hands half a header).
func FuzzTLSPipe(f *testing.F) {
	f.Add([]byte{23, 3, 3, 0, 2, 'h', 'i', 23, 3, 3, 0, 0, 21, 3, 3, 0, 1, 9}, []byte{3, 1, 9})
	f.Add([]byte{23, 3, 3, 0xff, 0xff, 1}, []byte{1})
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		p := &tlsPipe{loop: true, in: make([]byte, 0, loopTLSRead)}
		var ends []int // where each record of data ends
		for at := 0; at+recordHeader <= len(data); {
			n := recordLen(data[at:])
			if n > maxRecord {
				ends = append(ends, at+n) // handed as its header and what follows
				break
			}
			at += n
			ends = append(ends, at)
		}
		var got []byte
		fed, k := 0, 0
		cut := func() int {
			if len(cuts) == 0 {
				return 64
			}
			k++
			return int(cuts[k%len(cuts)]) + 1
		}
		for steps := 0; fed < len(data) || p.ready(); steps++ {
			if steps > 4*len(data)+100 {
				t.Fatal("the pipe does not advance")
			}
			if fed < len(data) {
				room := p.in[len(p.in):cap(p.in)]
				n := copy(room, data[fed:min(len(data), fed+cut())])
				if n == 0 && !p.ready() {
					return // a record longer than the buffer: the tls.Conn rejects its header
				}
				p.in = p.in[:len(p.in)+n]
				fed += n
			}
			for p.ready() {
				b := make([]byte, cut())
				n, err := p.Read(b)
				if err != nil || n == 0 {
					t.Fatalf("Read with a record ready: %d, %v", n, err)
				}
				from := len(got)
				got = append(got, b[:n]...)
				for _, e := range ends {
					if from < e && len(got) > e {
						t.Fatalf("a Read of [%d, %d) crosses the record end at %d", from, len(got), e)
					}
				}
			}
			if n, err := p.Read(make([]byte, 16)); n != 0 || err != errWouldBlock {
				t.Fatalf("Read with nothing ready: %d, %v", n, err)
			}
			p.compact()
		}
		if !bytes.Equal(got, data[:len(got)]) {
			t.Fatal("the pipe handed bytes that are not its input, in order")
		}
		if whole := len(ends) > 0 && ends[len(ends)-1] <= len(data); whole && len(got) < ends[len(ends)-1] {
			t.Fatalf("%d bytes handed of %d in whole records", len(got), ends[len(ends)-1])
		}
	})
}

// cutConn gives what it holds in reads of the sizes cut says, then EOF.
type cutConn struct {
	net.Conn
	data []byte
	cut  func() int
}

func (c *cutConn) Read(b []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(b[:min(len(b), c.cut())], c.data)
	c.data = c.data[n:]
	return n, nil
}

// In the handshake the pipe reads what came, in pieces of any size, and
// hands the tls.Conn its input in order, no Read crossing a record's end;
// stopped after any whole record (the handshake's last), what it read past
// it waits in the pipe, so that with what is still unread it is the rest
// of the input: nothing is lost at the handoff.
func FuzzTLSPipeHandshake(f *testing.F) {
	f.Add([]byte{22, 3, 3, 0, 2, 'h', 'i', 20, 3, 3, 0, 1, 1, 23, 3, 3, 0, 1, 9}, []byte{3, 1, 9}, uint8(2))
	f.Add([]byte{23, 3, 3, 0xff, 0xff, 1}, []byte{1}, uint8(1))
	f.Fuzz(func(t *testing.T, data, cuts []byte, stop uint8) {
		var ends []int // where each record of data ends
		for at := 0; at+recordHeader <= len(data); {
			n := recordLen(data[at:])
			at += n
			ends = append(ends, at)
			if n > maxRecord {
				break // handed as its header and what follows
			}
		}
		k := 0
		cut := func() int {
			if len(cuts) == 0 {
				return 64
			}
			k++
			return int(cuts[k%len(cuts)]) + 1
		}
		c := &cutConn{data: data, cut: cut}
		p := &tlsPipe{Conn: c}
		defer func() {
			if p.in != nil {
				flights.Put(p.in)
			}
		}()
		until := len(data) // read all, or up to the end of record stop
		if s := int(stop) % (len(ends) + 1); s > 0 && ends[s-1] <= len(data) {
			until = ends[s-1]
		}
		var got []byte
		for len(got) < until {
			b := make([]byte, cut())
			n, err := p.Read(b)
			if err != nil {
				break
			}
			if n == 0 {
				t.Fatal("a Read handed nothing, and no error")
			}
			from := len(got)
			got = append(got, b[:n]...)
			for _, e := range ends {
				if from < e && len(got) > e {
					t.Fatalf("a Read of [%d, %d) crosses the record end at %d", from, len(got), e)
				}
			}
		}
		if !bytes.Equal(got, data[:len(got)]) {
			t.Fatal("the pipe handed bytes that are not its input, in order")
		}
		if until < len(data) {
			if len(got) != until || p.left != 0 {
				t.Fatalf("stopped after the record ending at %d: handed %d, %d of the record left", until, len(got), p.left)
			}
			rest := append(append([]byte(nil), p.in[p.inOff:]...), c.data...)
			if !bytes.Equal(rest, data[until:]) {
				t.Fatalf("at the handoff %d bytes are kept and %d unread: not the %d past the last record", len(p.in)-p.inOff, len(c.data), len(data)-until)
			}
			return
		}
		// Read to the end: all of it is handed but a header cut short
		// where a record would start.
		if short := len(data) - len(got); short != 0 && (short >= recordHeader || p.left != 0) {
			t.Fatalf("%d bytes of %d handed", len(got), len(data))
		}
	})
}
