package h2conn

import (
	"context"
	"fmt"
	"sync"
)

// Group shares connections among Conns, Streams Conns per connection:
// Dials 1…m share the first connection, m+1…2m the second, and so on. The
// Dial that opens a connection connects it while those joining it wait; a
// connection is closed with its last Conn, and one that failed, or that
// Live says takes no more Conns, is left for a new one. Every client of
// loadgen's HTTP/2 and gRPC shares its connections with one: the lean
// clients' Conns, x/net's ClientConns and grpc-go's channels. It is safe
// for concurrent use.
type Group[C Shared] struct {
	Streams int    // Conns per connection
	Name    string // for errors: "grpc", "http2"
	Target  string // for errors

	Open    func() C                       // a new connection, not connected yet
	Connect func(context.Context, C) error // connects it: the job of the Dial that opened it
	Live    func(C) bool                   // whether a connected connection takes new Conns
	Close   func(C)                        // closes it, with its last Conn

	mu  sync.Mutex
	cur C // the connection new Conns join until it has Streams of them
}

// Member is a connection's part in its Group: connection types embed it.
type Member struct {
	ready   chan struct{} // closed when the Dial that opened it connected it, or failed to (connErr)
	connErr error         // why it did not connect; read after ready
	handed  int           // Conns handed out, ever; under Group.mu
	refs    int           // Conns not closed yet; under Group.mu
}

func (m *Member) membership() *Member { return m }

// Shared is what a Group holds: a pointer to a connection type that
// embeds Member.
type Shared interface {
	comparable
	membership() *Member
}

// Attach returns a reference on a connected connection: the current one,
// or a new one it connects.
func (g *Group[C]) Attach(ctx context.Context) (C, error) {
	c, fresh := g.acquire()
	m := c.membership()
	if fresh {
		m.connErr = g.Connect(ctx, c)
		close(m.ready)
	} else {
		select {
		case <-m.ready:
		case <-ctx.Done():
			g.Release(c, true)
			var none C
			return none, fmt.Errorf("%s: waiting for the connection to %s: %w", g.Name, g.Target, ctx.Err())
		}
	}
	if m.connErr != nil {
		g.Release(c, true)
		var none C
		return none, m.connErr
	}
	return c, nil
}

// acquire takes a reference on the current connection, or on a new one
// (fresh: the caller connects it).
func (g *Group[C]) acquire() (c C, fresh bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	var none C
	if c := g.cur; c != none && c.membership().handed < g.Streams && g.joinable(c) {
		m := c.membership()
		m.handed++
		m.refs++
		return c, false
	}
	c = g.Open()
	m := c.membership()
	m.ready = make(chan struct{})
	m.handed, m.refs = 1, 1
	g.cur = c
	return c, true
}

// Joinable reports whether c is connected and live (a connection still
// connecting is joinable).
func (g *Group[C]) Joinable(c C) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.joinable(c)
}

func (g *Group[C]) joinable(c C) bool {
	m := c.membership()
	select {
	case <-m.ready:
		return m.connErr == nil && g.Live(c)
	default:
		return true
	}
}

// Release drops a reference to c and closes it with the last one. A failed
// connection takes no more Conns.
func (g *Group[C]) Release(c C, failed bool) {
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
		g.Close(c)
	}
}

// Current is the connection new Conns join, if any (for tests).
func (g *Group[C]) Current() C {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.cur
}
