package accept

import "sync/atomic"

// Cap is a target's connection cap (MaxConns) and its counters: every
// accepted connection is counted, an admitted one is active until it is
// released, and one over the cap is rejected (to be closed at once). The
// same cap on every accept path of a target: event loops and goroutines.
type Cap struct {
	Max int // 0: no cap

	accepted atomic.Uint64
	rejected atomic.Uint64
	active   atomic.Int64
}

// Admit counts an accepted connection and reports whether it may be
// served: false when Max are open already (then it is counted as
// rejected).
func (c *Cap) Admit() bool {
	c.accepted.Add(1)
	if n := c.active.Add(1); c.Max > 0 && n > int64(c.Max) {
		c.active.Add(-1)
		c.rejected.Add(1)
		return false
	}
	return true
}

// Refuse counts a connection accepted but not served for another reason
// (the server is closing).
func (c *Cap) Refuse() { c.accepted.Add(1) }

// Release ends an admitted connection.
func (c *Cap) Release() { c.active.Add(-1) }

// Accepted counts the connections accepted (rejected ones included).
func (c *Cap) Accepted() uint64 { return c.accepted.Load() }

// Rejected counts the connections closed at once for the cap.
func (c *Cap) Rejected() uint64 { return c.rejected.Load() }

// Active is the number of connections being served now.
func (c *Cap) Active() int64 { return c.active.Load() }
