package layout

import (
	"net/netip"
	"testing"
)

// TestUnbound checks the layout of a proxy that cannot bind the source
// address (Caddy): no InboundSource, the app on loopback at its own port,
// everything else as it was, and still a valid layout.
func TestUnbound(t *testing.T) {
	lo := netip.MustParseAddr("127.0.0.1")
	for _, c := range []struct {
		name string
		s    Sidecar
		app  netip.AddrPort
	}{
		{"pod", Pod(netip.MustParseAddr("198.18.0.2"), 8080, netip.MustParseAddrPort("198.18.0.3:8080")), netip.AddrPortFrom(lo, 8080)},
		{"pod, app on 9090", Pod(netip.MustParseAddr("198.18.0.2"), 9090, netip.MustParseAddrPort("198.18.0.3:8080")), netip.AddrPortFrom(lo, 9090)},
		{"loopback, already unbound", Loopback(1, 2, 3, 4, 5), netip.AddrPortFrom(lo, 2)},
	} {
		got := c.s.Unbound()
		want := c.s
		want.InboundSource, want.App = netip.Addr{}, c.app
		if got != want {
			t.Errorf("%s: Unbound() = %+v, want %+v", c.name, got, want)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}
