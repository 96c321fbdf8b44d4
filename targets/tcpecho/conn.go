package tcpecho

import (
	"net"
	"sync"
)

// Buffer sizes. Echo answers each read with one write, so its buffer only
// bounds how much one round carries; a sink wants few, large reads.
const (
	echoBufSize = 64 << 10
	sinkBufSize = 256 << 10
)

// Buffers are pooled: with one connection per request (TCP_CRR) a fresh
// buffer per connection would be most of the server's garbage.
var (
	echoBufs = sync.Pool{New: func() any { b := make([]byte, echoBufSize); return &b }}
	sinkBufs = sync.Pool{New: func() any { b := make([]byte, sinkBufSize); return &b }}
)

// serve sniffs the first bytes of c: SinkMagic makes it a sink, anything
// else an echo. It reads no further than needed to decide, so an echo
// client's first message is answered as soon as it differs from the magic.
func (s *Server) serve(c net.Conn) {
	defer s.untrack(c)
	defer c.Close()
	bp := echoBufs.Get().(*[]byte)
	defer echoBufs.Put(bp)
	buf := *bp
	n := 0
	for {
		m, err := c.Read(buf[n:])
		n += m
		switch sniff(buf[:n]) {
		case isEcho:
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
			s.echoed.Add(uint64(n))
			if err == nil {
				s.echo(c, buf)
			}
			return
		case isSink:
			s.sunk.Add(uint64(n - len(SinkMagic)))
			if err == nil {
				s.sink(c)
			}
			return
		}
		if err != nil {
			return // closed while still a prefix of the magic: nothing to answer
		}
	}
}

type kind uint8

const (
	undecided kind = iota // a proper prefix of SinkMagic so far
	isEcho
	isSink
)

func sniff(b []byte) kind {
	k := min(len(b), len(SinkMagic))
	if string(b[:k]) != SinkMagic[:k] {
		return isEcho
	}
	if k == len(SinkMagic) {
		return isSink
	}
	return undecided
}

// echo writes back each read, whole, before reading again.
func (s *Server) echo(c net.Conn, buf []byte) {
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
			s.echoed.Add(uint64(n))
		}
		if err != nil {
			return
		}
	}
}

// sink reads and discards until the peer closes.
func (s *Server) sink(c net.Conn) {
	bp := sinkBufs.Get().(*[]byte)
	defer sinkBufs.Put(bp)
	buf := *bp
	for {
		n, err := c.Read(buf)
		if n > 0 {
			s.sunk.Add(uint64(n))
		}
		if err != nil {
			return
		}
	}
}
