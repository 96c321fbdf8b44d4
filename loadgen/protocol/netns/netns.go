// Package netns opens a protocol's connections from inside another network
// namespace: the load generator stays one process in its own namespace,
// and only the sockets live where the client of a path would (a pod's
// namespace in the CNI lab).
//
// A socket belongs to the network namespace of the thread that created it,
// for its whole life. So Dial locks its goroutine to its OS thread, moves
// that thread into the namespace, lets the wrapped Dialer create the
// connection, and moves the thread back before unlocking it. Everything
// after the dial (reads, writes, the engine) runs on any thread. A thread
// that cannot be moved back is never unlocked, so the Go runtime retires it
// instead of reusing it in the wrong namespace.
package netns

import (
	"context"

	"loadgen/loadgen/protocol"
)

// Dir is where `ip netns add` keeps named namespaces.
const Dir = "/var/run/netns"

// Dialer dials Inner's connections from inside NS.
type Dialer struct {
	NS    *NS
	Inner protocol.Dialer
}

// Wrap makes d dial from inside ns; the wrapper owns ns (Close closes it).
// Where d counts its transport connections (protocol.ConnCounter), so does
// the wrapper.
func Wrap(ns *NS, d protocol.Dialer) protocol.Dialer {
	w := &Dialer{NS: ns, Inner: d}
	if cc, ok := d.(protocol.ConnCounter); ok {
		return counting{w, cc}
	}
	return w
}

type counting struct {
	*Dialer
	protocol.ConnCounter
}

// Dial opens one connection of Inner from inside the namespace.
func (d *Dialer) Dial(ctx context.Context) (protocol.Conn, error) {
	var conn protocol.Conn
	err := d.NS.Do(func() error {
		var err error
		conn, err = d.Inner.Dial(ctx)
		return err
	})
	return conn, err
}

// Sessions, Socket, Session and PerRequest make the wrapper drivable by an
// event loop when Inner is: sockets are created inside the namespace.
func (d *Dialer) Sessions() bool {
	sd, ok := d.Inner.(protocol.SessionDialer)
	return ok && sd.Sessions()
}

func (d *Dialer) Socket() (fd int, err error) {
	err = d.NS.Do(func() error {
		fd, err = d.Inner.(protocol.SessionDialer).Socket()
		return err
	})
	return fd, err
}

func (d *Dialer) Session() protocol.Session { return d.Inner.(protocol.SessionDialer).Session() }

func (d *Dialer) PerRequest() bool { return d.Inner.(protocol.SessionDialer).PerRequest() }

// Resolve looks Inner's target up from inside the namespace, when Inner
// is a protocol.Resolver.
func (d *Dialer) Resolve(ctx context.Context) error {
	r, ok := d.Inner.(protocol.Resolver)
	if !ok {
		return nil
	}
	return d.NS.Do(func() error { return r.Resolve(ctx) })
}

// Close closes the namespace (the engine calls it when the run ends).
func (d *Dialer) Close() error { return d.NS.Close() }

// Datagrams are Inner's, when Inner counts datagrams (UDP).
func (d *Dialer) Datagrams(ctx context.Context) (protocol.Datagrams, bool) {
	dc, ok := d.Inner.(protocol.DatagramCounter)
	if !ok {
		return protocol.Datagrams{}, false
	}
	return dc.Datagrams(ctx)
}
