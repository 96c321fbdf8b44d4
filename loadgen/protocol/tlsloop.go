package protocol

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// TLS on an event loop. crypto/tls owns its handshake (a blocking
// exchange), so a connection is dialed and its handshake done in a
// goroutine, as a Dial's; then its socket is handed to the loop, and the
// tls.Conn goes on over memory: what the loop reads from the socket is fed
// to it, what it writes is taken for the loop to write. The records are
// crypto/tls's — no TLS is written here — and the loop makes the system
// calls, one read and one write per turn as without TLS. The handshake
// reads greedily too (a server's flight of six records in one read, not
// two reads a record): what came past its last record (a TLS 1.3 session
// ticket, a server's first HTTP/2 frames) is the loop's to feed at the
// handoff (Buffered). What the handshake writes waits for its next read,
// so its last flight, which no read follows (TLS 1.3's Finished), is in
// the Output at the handoff: the loop writes it with the first request,
// in one write and one segment.

// LoopTLS is a client TLS connection that an event loop drives once its
// handshake is over (Handoff).
type LoopTLS struct {
	*tls.Conn
	p *tlsPipe
}

// LoopTLSClient returns a TLS client over raw whose handshake (the
// caller's, with HandshakeContext) runs on raw, as tls.Client's would.
func LoopTLSClient(raw net.Conn, cfg *tls.Config) *LoopTLS {
	p := &tlsPipe{Conn: raw}
	return &LoopTLS{Conn: tls.Client(p, cfg), p: p}
}

// Handoff ends the connection's life on raw: it returns the socket
// (non-blocking, the caller's to close) and from then on the TLS records
// go through memory (TLSMux). Call it once the handshake is over, with no
// call on the connection in progress. The Mux's Output may then hold the
// handshake's last flight: the caller writes it (with its first request).
func (t *LoopTLS) Handoff() (int, error) {
	sc, ok := t.p.Conn.(syscall.Conn)
	if !ok {
		return -1, errors.New("tls handoff: not a socket")
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd := -1
	var derr error
	if err := rc.Control(func(s uintptr) {
		fd, derr = unix.FcntlInt(s, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return -1, err
	}
	if derr != nil {
		return -1, os.NewSyscallError("fcntl", derr)
	}
	// The duplicate shares the socket and its O_NONBLOCK; closing the
	// runtime's descriptor leaves the socket open.
	t.p.Conn.Close()
	t.p.loop = true
	if t.p.left != 0 {
		fd2 := fd
		defer unix.Close(fd2)
		return -1, errors.New("tls handoff: a record half read")
	}
	// What came past the handshake moves to the loop's room for
	// ciphertext, which takes a record of any size.
	if p := t.p; p.in != nil {
		var in []byte
		if rest := p.in[p.inOff:]; len(rest) > 0 {
			in = append(records.Get(), rest...)
		}
		flights.Put(p.in)
		p.in, p.inOff = in, 0
	}
	return fd, nil
}

// Release hands back what a connection that failed before its handoff
// borrowed (Handoff does for one handed off).
func (t *LoopTLS) Release() {
	if t.p.in != nil {
		flights.Put(t.p.in) // the one Put that matches its size keeps it
		records.Put(t.p.in)
		t.p.in, t.p.inOff = nil, 0
	}
}

// loopTLSRead is the room for ciphertext: two records of the largest
// size.
const loopTLSRead = 2 * maxRecord

// records lends the loop's connections their room for ciphertext: a
// connection holds it only while a record it read is partly handed.
var records = NewBuffers(loopTLSRead)

// flights lends a handshake its room: a server's flight (some 1.5-5 KiB:
// hello, certificates, Finished) in one read, or a larger one in pieces
// — 512 handshakes at once hold 2 MiB.
var flights = NewBuffers(4 << 10)

// errWouldBlock is a temporary error, which crypto/tls does not keep as
// the connection's: a record partly read stays buffered for the next Read.
var errWouldBlock = wouldBlock{}

type wouldBlock struct{}

func (wouldBlock) Error() string   { return "no more bytes read yet" }
func (wouldBlock) Timeout() bool   { return false }
func (wouldBlock) Temporary() bool { return true }

// tlsPipe is the tls.Conn's transport: raw until Handoff, then memory.
// Both read into in, as much as came, and hand the tls.Conn a record at
// a time — never the bytes of the next — so that it knows what the
// tls.Conn holds: at the handoff nothing, and on the loop only the record
// it is reading. Filled then reads from the tls.Conn exactly while a whole
// record waits (a Read that found nothing would cost crypto/tls an
// allocation, as every record does).
type tlsPipe struct {
	net.Conn
	loop   bool
	left   int    // bytes of the record being handed not yet handed
	in     []byte // ciphertext read, from inOff on not yet handed; borrowed (flights in the handshake, then records), nil when none is left
	inOff  int
	out    []byte // ciphertext for the loop to write, from outOff on
	outOff int
}

const recordHeader = 5

func recordLen(h []byte) int { return recordHeader + (int(h[3])<<8 | int(h[4])) }

func (p *tlsPipe) Read(b []byte) (int, error) {
	if !p.loop {
		if err := p.flush(); err != nil {
			return 0, err
		}
		if err := p.readRaw(); err != nil {
			return 0, err
		}
	} else if !p.ready() {
		return 0, errWouldBlock
	}
	if p.left == 0 {
		p.left = recordLen(p.in[p.inOff:])
	}
	n := copy(b[:min(len(b), p.left)], p.in[p.inOff:])
	p.inOff += n
	p.left -= n
	if p.inOff == len(p.in) {
		p.in, p.inOff = p.in[:0], 0
	}
	return n, nil
}

// ready reports that the tls.Conn can read a record: the rest of the one
// it reads, or a whole one (or the header of one too long, which it
// rejects).
func (p *tlsPipe) ready() bool {
	b := p.in[p.inOff:]
	if p.left > 0 {
		return len(b) > 0
	}
	if len(b) < recordHeader {
		return false
	}
	n := recordLen(b)
	return len(b) >= n || n > maxRecord
}

// maxRecord is the largest record: 2^14 bytes and 256 of expansion (RFC
// 8446 §5.2), with its header.
const maxRecord = recordHeader + 16<<10 + 256

// compact moves what is not handed yet to the front when there is no room
// left for a record of the largest size.
func (p *tlsPipe) compact() {
	if p.inOff > 0 && cap(p.in)-len(p.in) < maxRecord {
		p.in = p.in[:copy(p.in[:cap(p.in)], p.in[p.inOff:])]
		p.inOff = 0
	}
}

// readRaw reads what raw has (the handshake's blocking reads) into in
// until there is something to hand: the rest of the record being read, or
// the next one's header. Blocking, the tls.Conn may take a record in
// pieces.
func (p *tlsPipe) readRaw() error {
	for {
		b := p.in[p.inOff:]
		if p.left > 0 && len(b) > 0 || len(b) >= recordHeader {
			return nil
		}
		if p.in == nil {
			p.in = flights.Get()
		}
		if p.inOff > 0 { // less than a header is left
			p.in, p.inOff = p.in[:copy(p.in[:cap(p.in)], b)], 0
		}
		n, err := p.Conn.Read(p.in[len(p.in):cap(p.in)])
		p.in = p.in[:len(p.in)+n]
		if n == 0 {
			if err == nil {
				err = io.ErrNoProgress
			}
			return err
		}
	}
}

// Write keeps what the tls.Conn writes: on the loop for the loop to
// write, and in the handshake until its next read (flush), so that the
// flight no read follows — TLS 1.3's Finished — waits in out for the
// loop, which writes it with the first request.
func (p *tlsPipe) Write(b []byte) (int, error) {
	p.out = append(p.out, b...)
	return len(b), nil
}

// flush writes what the handshake wrote before it reads.
func (p *tlsPipe) flush() error {
	if len(p.out) == 0 {
		return nil
	}
	_, err := p.Conn.Write(p.out)
	p.out = p.out[:0]
	return err
}

// After the handoff the loop owns the socket and its deadlines.
func (p *tlsPipe) SetDeadline(t time.Time) error {
	if p.loop {
		return nil
	}
	return p.Conn.SetDeadline(t)
}

func (p *tlsPipe) SetReadDeadline(t time.Time) error {
	if p.loop {
		return nil
	}
	return p.Conn.SetReadDeadline(t)
}

func (p *tlsPipe) SetWriteDeadline(t time.Time) error {
	if p.loop {
		return nil
	}
	return p.Conn.SetWriteDeadline(t)
}

func (p *tlsPipe) Close() error {
	if p.loop {
		return nil // the loop closes the socket
	}
	return p.Conn.Close()
}

// TLSMux is inner, a Mux of plaintext, over t once handed off: Output is
// inner's encrypted, what is read is decrypted for inner. A TLS error (a
// bad record, an alert, the server's close_notify) fails the connection
// as a read error.
func TLSMux(inner Mux, t *LoopTLS) Mux {
	pk, _ := inner.(MuxPicker)
	return &tlsMux{Mux: inner, t: t, pk: pk}
}

type tlsMux struct {
	Mux
	pk   MuxPicker // inner, when it holds a request mix
	t    *LoopTLS
	done []int32
	err  error // the TLS connection failed
}

func (m *tlsMux) Output() []byte {
	p := m.t.p
	if plain := m.Mux.Output(); len(plain) > 0 && m.err == nil {
		n, err := m.t.Write(plain)
		m.Mux.Wrote(n)
		if err != nil {
			m.err = err
		}
	}
	return p.out[p.outOff:]
}

func (m *tlsMux) Wrote(n int) {
	p := m.t.p
	p.outOff += n
	switch {
	case p.outOff >= len(p.out):
		p.out, p.outOff = p.out[:0], 0
	case p.outOff >= loopTLSRead:
		p.out = p.out[:copy(p.out, p.out[p.outOff:])]
		p.outOff = 0
	}
}

func (m *tlsMux) ReadBuf() []byte {
	p := m.t.p
	if p.in == nil {
		p.in = records.Get()
	}
	return p.in[len(p.in):cap(p.in)]
}

// Filled decrypts what came, a record at a time, for inner; a record
// partly read waits for the rest, and so does plaintext inner has no room
// for yet.
func (m *tlsMux) Filled(n int) []int32 {
	p := m.t.p
	p.in = p.in[:len(p.in)+n]
	m.done = m.done[:0]
	// A Read that filled inner's buffer may have left the rest of its
	// record's plaintext in the tls.Conn: read again then too.
	full := false
	for m.err == nil && !m.Mux.Dead() && (full || p.ready()) {
		buf := m.Mux.ReadBuf()
		k, err := m.t.Read(buf)
		full = k > 0 && k == len(buf)
		// Filled(0) when a record held no plaintext (a session ticket, a
		// KeyUpdate): inner hands back the buffer it lent.
		m.done = append(m.done, m.Mux.Filled(k)...)
		if err != nil && err != errWouldBlock {
			m.err = err
			m.done = append(m.done, m.Mux.Fail(Read)...)
		}
	}
	p.compact()
	p.giveBack()
	return m.done
}

// giveBack returns the room for ciphertext once all of it is handed.
func (p *tlsPipe) giveBack() {
	if p.in != nil && p.inOff == len(p.in) {
		records.Put(p.in)
		p.in, p.inOff = nil, 0
	}
}

func (m *tlsMux) Fail(class ErrClass) []int32 {
	if m.err == nil {
		m.err = net.ErrClosed
	}
	if p := m.t.p; p.in != nil { // nothing more is read
		records.Put(p.in)
		p.in, p.inOff = nil, 0
	}
	return m.Mux.Fail(class)
}

// Buffered reports that records came with the handshake's last: the
// loop feeds them (Filled(0)) as if just read.
func (m *tlsMux) Buffered() bool { return m.t.p.ready() }

func (m *tlsMux) Usable() bool { return m.err == nil && m.Mux.Usable() }
func (m *tlsMux) Dead() bool   { return m.err != nil || m.Mux.Dead() }

// Pick picks slot k's next request, when inner holds a request mix.
func (m *tlsMux) Pick(k, i int) { m.pk.Pick(k, i) }

// Goodbye is inner's, encrypted, and TLS's close_notify.
func (m *tlsMux) Goodbye() []byte {
	p := m.t.p
	if m.err == nil {
		if g := m.Mux.Goodbye(); len(g) > 0 {
			m.t.Write(g)
		}
		m.t.CloseWrite()
	}
	return p.out[p.outOff:]
}
