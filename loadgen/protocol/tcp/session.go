package tcp

import (
	"golang.org/x/sys/unix"

	"loadgen/loadgen/protocol"
)

var _ protocol.SessionDialer = (*Dialer)(nil)

// Sessions is true: an event loop drives every mode.
func (d *Dialer) Sessions() bool { return true }

// Socket starts a connection for an event loop, made where Config.Enter
// says (a network namespace).
func (d *Dialer) Socket() (fd int, err error) {
	if d.cfg.Enter == nil {
		fd, err = d.target.Socket()
	} else {
		err = d.cfg.Enter(func() error {
			fd, err = d.target.Socket()
			return err
		})
	}
	if err == nil && d.cfg.Mode == Stream {
		_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 0) // Nagle on: see Stream
	}
	return fd, err
}

// PerRequest reports whether the mode connects for every request (tcp-crr
// does).
func (d *Dialer) PerRequest() bool { return d.cfg.Mode == CRR }

// Session returns one connection's state: tcp-rr and tcp-crr write the
// payload and count as many bytes back; tcp-stream first opens the sink,
// then writes a chunk per request and waits for nothing.
func (d *Dialer) Session() protocol.Session {
	s := &session{payload: d.payload, req: d.payload, echo: d.cfg.Mode != Stream}
	if !s.echo {
		s.req = append([]byte(SinkMagic), d.payload...)
	}
	return s
}

type session struct {
	payload []byte
	req     []byte // the next request: the payload, after the sink's opening once
	echo    bool
	got     int
}

func (s *session) Request() []byte { return s.req }

func (s *session) Response(p []byte) (int, bool, protocol.Outcome) {
	o := protocol.Outcome{Written: int64(len(s.payload))}
	if !s.echo {
		s.req = s.payload // the sink is open
		return 0, true, o
	}
	n := min(len(p), len(s.payload)-s.got)
	if s.got += n; s.got < len(s.payload) {
		return n, false, protocol.Outcome{}
	}
	o.Bytes, s.got = int64(s.got), 0
	return n, true, o
}

func (s *session) Closed() protocol.Outcome {
	o := protocol.Outcome{Err: protocol.Read, Done: true, Bytes: int64(s.got), Written: int64(len(s.payload))}
	s.got = 0
	return o
}
