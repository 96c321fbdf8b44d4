package h2conn

import (
	"fmt"

	"golang.org/x/net/http2"

	"loadgen/loadgen/protocol/h2wire"
)

// The frames that steer the connection rather than carry a response:
// SETTINGS (and the HPACK table they size), GOAWAY, WINDOW_UPDATE.

func (c *Conn) settingsLocked(fh h2wire.FrameHeader, p []byte) error {
	// §6.5: on stream 0 only; an ack is empty; the payload is 6-byte
	// settings.
	if fh.StreamID != 0 {
		return connError{http2.ErrCodeProtocol, "SETTINGS on a stream"}
	}
	if fh.Flags.Has(http2.FlagSettingsAck) {
		if len(p) != 0 {
			return connError{http2.ErrCodeFrameSize, "SETTINGS ack with a payload"}
		}
		return nil
	}
	if len(p)%6 != 0 {
		return connError{http2.ErrCodeFrameSize, "SETTINGS length not a multiple of 6"}
	}
	for ; len(p) > 0; p = p[6:] {
		id, v := http2.SettingID(uint16(p[0])<<8|uint16(p[1])), be32(p[2:])
		switch id {
		case http2.SettingHeaderTableSize:
			c.peerTableSizeLocked(v)
		case http2.SettingEnablePush:
			// §6.5.2: 0 or 1, and a client MUST treat 1 from a server as
			// a connection error.
			if v != 0 {
				return connError{http2.ErrCodeProtocol, fmt.Sprintf("SETTINGS_ENABLE_PUSH %d from a server", v)}
			}
		case http2.SettingMaxConcurrentStreams:
			c.peerMaxStreams = int(min(v, 1<<30))
		case http2.SettingInitialWindowSize:
			if v > h2wire.MaxWindow { // §6.5.2
				return connError{http2.ErrCodeFlowControl, "SETTINGS_INITIAL_WINDOW_SIZE above 2^31-1"}
			}
			delta := int64(v) - c.peerWindow
			c.peerWindow = int64(v)
			for _, s := range c.streams {
				if s.id != 0 && !s.finished {
					s.sendWindow += delta
					// §6.9.2: a change that takes a window past
					// 2^31-1 is a connection error.
					if s.sendWindow > h2wire.MaxWindow {
						return connError{http2.ErrCodeFlowControl, "SETTINGS_INITIAL_WINDOW_SIZE takes a stream window past 2^31-1"}
					}
				}
			}
		case http2.SettingMaxFrameSize:
			if v < h2wire.DefaultMaxFrame || v > 1<<24-1 { // §6.5.2
				return connError{http2.ErrCodeProtocol, "SETTINGS_MAX_FRAME_SIZE out of range"}
			}
			c.peerMaxFrame = int(v)
		}
		// Unknown settings are ignored (§6.5.2).
	}
	c.wbuf = h2wire.AppendSettingsAck(c.wbuf) // §6.5.3
	c.gotSettings = true
	return nil
}

// peerTableSizeLocked applies the server's SETTINGS_HEADER_TABLE_SIZE to
// how requests are encoded. Before the first request, the blocks are made
// for the table's size. Later, an update shrinking the table is announced
// at the start of the next header block (RFC 7541 §4.2), and requests
// whose entries no longer fit are sent as literals. A larger table is not
// used beyond what the blocks were made for.
func (c *Conn) peerTableSizeLocked(v uint32) {
	if v >= c.encMax {
		return
	}
	c.encMax = v
	c.hpPrefix = h2wire.AppendTableSizeUpdate(c.hpPrefix[:0], v)
	switch {
	case c.hp == hpFirst:
		c.blocks = c.d.encode(v)
	case c.blocks[0].Size > v: // every request of a mix fills the same
		c.hp = hpLiteral
	}
}

// blockLocked returns the header block of the next request, request i
// of a mix (0 without one), after hpPrefix.
func (c *Conn) blockLocked(i int) []byte {
	b := &c.blocks[i]
	switch c.hp {
	case hpFirst:
		c.hp = hpSteady
		return b.First
	case hpLiteral:
		return b.Literal
	}
	return b.Steady
}

func (c *Conn) goAwayLocked(fh h2wire.FrameHeader, p []byte) error {
	if fh.StreamID != 0 { // §6.8
		return connError{http2.ErrCodeProtocol, "GOAWAY on a stream"}
	}
	last, _, ok := h2wire.ParseGoAway(p)
	if !ok {
		return connError{http2.ErrCodeFrameSize, "GOAWAY shorter than 8 bytes"}
	}
	// §6.8: no new streams on the connection; the streams above its last
	// stream ID were not processed and can be sent again elsewhere (§8.7),
	// the others may still complete. A later GOAWAY may lower the last
	// stream ID, never raise it.
	if !c.goaway || last < c.goawayLast {
		c.goawayLast = last
	}
	c.goaway = true
	c.broken.Store(true)
	for _, s := range c.streams {
		if s.id > c.goawayLast && !s.finished {
			s.unprocessed = true
			c.finishLocked(s)
		}
	}
	return nil
}

func (c *Conn) windowUpdateLocked(fh h2wire.FrameHeader, p []byte) error {
	u, ok := h2wire.ParseWindowUpdate(p)
	if !ok { // §6.9
		return connError{http2.ErrCodeFrameSize, "WINDOW_UPDATE not 4 bytes"}
	}
	incr := int64(u)
	// §6.9: an increment of 0 is a PROTOCOL_ERROR, of the connection on
	// stream 0 and of the stream otherwise; §6.9.1: a window past 2^31-1
	// is a FLOW_CONTROL_ERROR, likewise.
	if fh.StreamID == 0 {
		switch {
		case incr == 0:
			return connError{http2.ErrCodeProtocol, "connection WINDOW_UPDATE of 0"}
		case c.sendWindow+incr > h2wire.MaxWindow:
			return connError{http2.ErrCodeFlowControl, "connection window past 2^31-1"}
		}
		c.sendWindow += incr
		return nil
	}
	s, err := c.lookup(fh)
	if s == nil {
		return err // a window for a stream that ended is no error (§6.9)
	}
	switch {
	case incr == 0:
		c.resetLocked(s, http2.ErrCodeProtocol)
		s.malformed = true
	case s.sendWindow+incr > h2wire.MaxWindow:
		c.resetLocked(s, http2.ErrCodeFlowControl)
		s.malformed = true
	default:
		s.sendWindow += incr
	}
	return nil
}
