package protocol

import "context"

// Datagrams are what a datagram protocol (UDP) sent over a whole run, its
// warm-up included, and what its peers received of it: for a round trip
// (udp-rr), the answers that came back in time; for a stream (udp-stream),
// what the receivers said they received.
type Datagrams struct {
	Sent          int64 // datagrams written whole
	Received      int64 // datagrams that reached the other end, by its count
	ReceivedBytes int64
	// Unknown are datagrams sent on connections whose receiver never said
	// how many it got (its answer lost): counted in neither Received nor
	// the loss.
	Unknown int64
}

// Lost is Sent less what was received or is unknown.
func (d Datagrams) Lost() int64 { return d.Sent - d.Unknown - d.Received }

// DatagramCounter is a Dialer that counts its datagrams and their loss.
// The engine asks it once every connection is closed.
type DatagramCounter interface {
	// Datagrams waits, within ctx, for the receivers' counts of the closed
	// connections and returns the run's totals; ok is false when the
	// Dialer sends no datagrams (a wrapper over another protocol).
	Datagrams(ctx context.Context) (d Datagrams, ok bool)
}
