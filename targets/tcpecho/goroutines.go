package tcpecho

import (
	"net"

	"loadgen/targets/accept"
)

// A goroutine per connection: the server where there are no event loops
// (and, in tests, beside them). serve is in conn.go.

func (s *Server) acceptLoop(ln net.Listener) {
	defer s.wg.Done()
	accept.Loop(ln, s.done, func(c net.Conn) {
		if !s.track(c) {
			c.Close()
			return
		}
		go s.serve(c)
	})
}

// track registers c, or reports false when the server is closed or full.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state.Closed {
		s.limit.Refuse()
		return false
	}
	if !s.limit.Admit() {
		return false
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	return true
}

func (s *Server) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	s.limit.Release()
	s.wg.Done()
}
