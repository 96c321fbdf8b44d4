package evloop

import (
	"net"
	"sync"

	"golang.org/x/sys/unix"

	"loadgen/internal/heldp"
)

// Group is a listening socket served by event loops: each loop an epoll
// set (Poller) with an Acceptor on the shared socket, run on a goroutine
// of its own. Every target's loops start and stop this way.
type Group struct {
	ln   *Listener
	ps   []*Poller
	accs []*Acceptor
	wg   sync.WaitGroup
	kept bool // the loops keep their Ps (KeepPs)
}

// NewGroup takes ln (see Take) and makes n loops whose batches hold up to
// batch events, each accepting with the listener's events tagged tag.
// Nothing runs until Go; on an error nothing is left open.
func NewGroup(ln net.Listener, n, batch int, tag int32) (*Group, error) {
	l, err := Take(ln)
	if err != nil {
		return nil, err
	}
	g := &Group{ln: l}
	for range max(n, 1) {
		p, err := NewPoller(batch)
		var acc *Acceptor
		if err == nil {
			if acc, err = NewAcceptor(l, p, tag); err != nil {
				p.Close()
			}
		}
		if err != nil {
			for _, p := range g.ps {
				p.Close()
			}
			l.Close()
			return nil, err
		}
		g.ps, g.accs = append(g.ps, p), append(g.accs, acc)
	}
	return g, nil
}

// Len is the number of loops.
func (g *Group) Len() int { return len(g.ps) }

// Loop is loop i's epoll set and acceptor.
func (g *Group) Loop(i int) (*Poller, *Acceptor) { return g.ps[i], g.accs[i] }

// KeepPs makes the loops wait in epoll_pwait keeping their Ps, as the
// generator's loops do (package heldp), when a P is left then for the rest
// of the process; it reports whether they will. For a target whose every
// connection stays on its loops: a connection handed to goroutines would
// have the one spare P for them all. Call it before Go.
func (g *Group) KeepPs() bool {
	if !heldp.Take(len(g.ps)) {
		return false
	}
	for i, p := range g.ps {
		if p.keepP() != nil {
			for _, p := range g.ps[:i] {
				p.kept = false
				unix.Close(p.wake) // which takes it out of the set
			}
			heldp.Give(len(g.ps))
			return false
		}
	}
	for _, p := range g.ps {
		p.unpoll()
	}
	g.kept = true
	return true
}

// Go runs run(i) for every loop i, each on a goroutine of its own; run
// returns once loop i's Poller is closed.
func (g *Group) Go(run func(i int)) {
	for i := range g.ps {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			run(i)
		}()
	}
}

// Close stops the loops (closing their sets), waits for every run to
// return, then closes the listening socket.
func (g *Group) Close() error {
	for _, p := range g.ps {
		p.Close()
	}
	g.wg.Wait()
	if g.kept {
		heldp.Give(len(g.ps))
		g.kept = false
	}
	return g.ln.Close()
}
