package tcpecho

import "testing"

// solos is how many messages the loops echoed solo; the server must be
// closed (its loops ended).
func solos(s *Server) uint64 {
	var n uint64
	if s.ev != nil {
		for _, l := range s.ev.ls {
			n += l.solos
		}
	}
	return n
}

// A loop whose one connection goes on echoing (TCP_RR) reads it blocking:
// every echo is right, and on a loop that keeps its P most of them are
// served so: on a quiet machine all but the first soloAfter and one in
// soloRounds+1; a client descheduled past the solo slice (1 ms) sends its
// next message to the loop's epoll wait instead, which on a busy CI machine
// running every package at once happened to 13% of them. Half is the floor:
// a loop that never went solo, or left solo after each echo, falls far below.
func TestSoloEcho(t *testing.T) {
	each(t, func(t *testing.T, b backend) {
		s := start(t, b, Config{})
		c := dial(t, s)
		const n = 650
		if err := pingPong(t, c, n); err != nil {
			t.Fatal(err)
		}
		c.Close()
		s.Close()
		if got := solos(s); b.kept && got < n/2 {
			t.Errorf("%d of %d messages echoed solo, want at least half", got, n)
		} else if !b.kept && got != 0 {
			t.Errorf("%d messages echoed solo by loops that do not keep their Ps", got)
		}
	})
}
