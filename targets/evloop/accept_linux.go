package evloop

import (
	"net/netip"
	"time"

	"golang.org/x/sys/unix"
)

// Acceptor is one loop's view of a Listener: it takes the pending
// connections and rides out failures (out of descriptors, say) by taking
// the listener out of the loop's set for a while, backing off as
// targets/accept does, instead of spinning on a socket that stays
// readable.
type Acceptor struct {
	ln      *Listener
	p       *Poller
	tag     int32
	backoff time.Duration
	resume  time.Time // when the listener is watched again; zero while watched
}

// NewAcceptor watches ln in p, its events tagged tag.
func NewAcceptor(ln *Listener, p *Poller, tag int32) (*Acceptor, error) {
	a := &Acceptor{ln: ln, p: p, tag: tag}
	return a, p.Add(ln.FD(), unix.EPOLLIN, tag)
}

// Next returns the next pending connection (see Listener.Accept). ok is
// false once none is pending, or when accepting failed and the listener
// rests (until Resume).
func (a *Acceptor) Next() (fd int, peer netip.AddrPort, ok bool) {
	for {
		fd, peer, err := a.ln.Accept()
		switch err {
		case nil:
			a.backoff = 0
			return fd, peer, true
		case unix.EINTR, unix.ECONNABORTED:
			continue
		case unix.EAGAIN:
			return -1, peer, false
		}
		a.backoff = min(max(2*a.backoff, 5*time.Millisecond), time.Second)
		a.resume = time.Now().Add(a.backoff)
		a.p.Del(a.ln.FD())
		return -1, peer, false
	}
}

// Due is when Resume is to be called: zero while the listener is watched.
func (a *Acceptor) Due() time.Time { return a.resume }

// Resume watches the listener again once its rest is over.
func (a *Acceptor) Resume(now time.Time) error {
	if a.resume.IsZero() || now.Before(a.resume) {
		return nil
	}
	a.resume = time.Time{}
	return a.p.Add(a.ln.FD(), unix.EPOLLIN, a.tag)
}

// Earliest is the earlier of two deadlines, zero meaning none.
func Earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}
