package rpc

import (
	"context"
	"fmt"
	"sync"
)

// connGroup shares connections among Conns, streams Conns per connection:
// Dials 1…m share the first connection, m+1…2m the second, and so on. The
// Dial that opens a connection connects it while those joining it wait; a
// connection is closed with its last Conn, and one that failed, or that
// live says takes no more Conns, is left for a new one. Both clients group
// their connections with it: the lean one its transports, the library one
// its grpc-go channels. It is safe for concurrent use.
type connGroup[C shared] struct {
	streams int    // Conns per connection
	target  string // for errors

	open    func() C                       // a new connection, not connected yet
	connect func(context.Context, C) error // connects it: the job of the Dial that opened it
	live    func(C) bool                   // whether a connected connection takes new Conns
	close   func(C)                        // closes it, with its last Conn

	mu  sync.Mutex
	cur C // the connection new Conns join until it has streams of them
}

// member is a connection's part in its connGroup: connection types embed it.
type member struct {
	ready   chan struct{} // closed when the Dial that opened it connected it, or failed to (connErr)
	connErr error         // why it did not connect; read after ready
	handed  int           // Conns handed out, ever; under connGroup.mu
	refs    int           // Conns not closed yet; under connGroup.mu
}

func (m *member) membership() *member { return m }

// shared is what a connGroup holds: a pointer to a connection type that
// embeds member.
type shared interface {
	comparable
	membership() *member
}

// attach returns a reference on a connected connection: the current one,
// or a new one it connects.
func (g *connGroup[C]) attach(ctx context.Context) (C, error) {
	c, fresh := g.acquire()
	m := c.membership()
	if fresh {
		m.connErr = g.connect(ctx, c)
		close(m.ready)
	} else {
		select {
		case <-m.ready:
		case <-ctx.Done():
			g.release(c, true)
			var none C
			return none, fmt.Errorf("grpc: waiting for the connection to %s: %w", g.target, ctx.Err())
		}
	}
	if m.connErr != nil {
		g.release(c, true)
		var none C
		return none, m.connErr
	}
	return c, nil
}

// acquire takes a reference on the current connection, or on a new one
// (fresh: the caller connects it).
func (g *connGroup[C]) acquire() (c C, fresh bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var none C
	if c := g.cur; c != none && c.membership().handed < g.streams && g.joinable(c) {
		m := c.membership()
		m.handed++
		m.refs++
		return c, false
	}
	c = g.open()
	m := c.membership()
	m.ready = make(chan struct{})
	m.handed, m.refs = 1, 1
	g.cur = c
	return c, true
}

// joinable: connected and live (a connection still connecting is).
func (g *connGroup[C]) joinable(c C) bool {
	m := c.membership()
	select {
	case <-m.ready:
		return m.connErr == nil && g.live(c)
	default:
		return true
	}
}

// release drops a reference to c and closes it with the last one. A failed
// connection takes no more Conns.
func (g *connGroup[C]) release(c C, failed bool) {
	m := c.membership()
	g.mu.Lock()
	m.refs--
	last := m.refs == 0
	if g.cur == c && (failed || last) {
		var none C
		g.cur = none
	}
	g.mu.Unlock()
	if last {
		g.close(c)
	}
}
