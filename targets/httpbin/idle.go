package httpbin

import "time"

// Idle HTTP/1.1 connections are closed by a reaper rather than by read
// deadlines: fasthttp would set and clear a deadline on every request, two
// timer updates that cost a few per cent of the hot path. Instead a
// connection notes the reaper's tick when it starts waiting in Read, and
// the reaper, a few times per IdleTimeout, closes the connections that have
// waited longer than IdleTimeout. net/http keeps its own idle timeouts.

// idleTicks is the number of reaper ticks per IdleTimeout: a connection is
// closed between 1 and 1.25 IdleTimeout after it fell silent.
const idleTicks = 4

func (s *Server) reap() {
	defer s.wg.Done()
	t := time.NewTicker(max(s.cfg.IdleTimeout/idleTicks, time.Millisecond))
	defer t.Stop()
	var idle []*sniffConn
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		now := s.tick.Add(1)
		idle = idle[:0]
		s.mu.Lock()
		for c := range s.conns {
			if since := c.readSince.Load(); since != 0 && now-since > idleTicks {
				idle = append(idle, c)
			}
		}
		s.mu.Unlock()
		for _, c := range idle {
			c.Close()
		}
	}
}
