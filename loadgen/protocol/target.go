package protocol

import (
	"fmt"
	"net"
	"net/netip"
	"sync"
)

// Target is a host:port that Sessions' sockets connect to, resolved once:
// a name is looked up at the first Socket, never on the hot path.
type Target struct {
	Addr string // host:port

	once sync.Once
	ap   netip.AddrPort
	err  error
}

func (t *Target) resolve() {
	a, err := net.ResolveTCPAddr("tcp", t.Addr)
	if err != nil {
		t.err = err
		return
	}
	ip, ok := netip.AddrFromSlice(a.IP)
	if !ok {
		t.err = fmt.Errorf("dial tcp %s: no address", t.Addr)
		return
	}
	t.ap = netip.AddrPortFrom(ip, uint16(a.Port))
}
