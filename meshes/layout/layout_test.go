package layout

import (
	"net/netip"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	ok := Pod(netip.MustParseAddr("198.18.0.2"), 8080, netip.MustParseAddrPort("198.18.0.3:8080"))
	files := &MTLS{CA: "/tmp/x/ca.crt", Cert: "/tmp/x/w.crt", Key: "/tmp/x/w.key", PeerID: "spiffe://cluster.local/ns/default/sa/server", PeerName: "server.default.svc.cluster.local"}
	with := func(f func(*Sidecar)) Sidecar {
		s := ok
		f(&s)
		return s
	}
	tests := []struct {
		name string
		s    Sidecar
		want string
	}{
		{"pod", ok, ""},
		{"loopback", Loopback(1, 2, 3, 4, 5), ""},
		{"mtls", with(func(s *Sidecar) { s.MTLS = files }), ""},
		{"no inbound", with(func(s *Sidecar) { s.Inbound = netip.AddrPort{} }), "inbound address"},
		{"port 0", with(func(s *Sidecar) { s.App = netip.AddrPortFrom(s.App.Addr(), 0) }), "app address"},
		{"same port", with(func(s *Sidecar) { s.Outbound = s.Inbound }), "must be three addresses"},
		{"workers", with(func(s *Sidecar) { s.Workers = -1 }), "workers must be"},
		{"upstream name", with(func(s *Sidecar) {
			s.Upstream = netip.AddrPort{}
			s.UpstreamName = "loadgen-target.ns.svc.cluster.local:8080"
		}), ""},
		{"upstream name no port", with(func(s *Sidecar) { s.UpstreamName = "loadgen-target" }), "upstream name"},
		{"upstream name bad", with(func(s *Sidecar) { s.UpstreamName = "a b:80" }), "upstream name"},
		{"upstream name port", with(func(s *Sidecar) { s.UpstreamName = "a:0" }), "upstream name"},
		{"mtls empty", with(func(s *Sidecar) { m := *files; m.Key = ""; s.MTLS = &m }), "mtls key path is empty"},
		{"mtls space", with(func(s *Sidecar) { m := *files; m.CA = "/tmp/my ca.crt"; s.MTLS = &m }), "character ' '"},
		{"mtls quote", with(func(s *Sidecar) { m := *files; m.Cert = `a";x`; s.MTLS = &m }), `character '"'`},
		{"peer name", with(func(s *Sidecar) { m := *files; m.PeerName = "a b"; s.MTLS = &m }), "mtls peer name"},
		{"peer name empty", with(func(s *Sidecar) { m := *files; m.PeerName = ""; s.MTLS = &m }), "mtls peer name"},
		{"peer id", with(func(s *Sidecar) { m := *files; m.PeerID = "https://x/y"; s.MTLS = &m }), "want a SPIFFE ID"},
		{"peer id chars", with(func(s *Sidecar) { m := *files; m.PeerID = "spiffe://a/b c"; s.MTLS = &m }), "not allowed"},
		{"peer id quote", with(func(s *Sidecar) { m := *files; m.PeerID = `spiffe://a/b"`; s.MTLS = &m }), "not allowed"},
	}
	if got := with(func(s *Sidecar) { s.UpstreamName = "a.b:80" }).UpstreamAddr(); got != "a.b:80" {
		t.Errorf("UpstreamAddr() = %q, want the name", got)
	}
	if got := ok.UpstreamAddr(); got != "198.18.0.3:8080" {
		t.Errorf("UpstreamAddr() = %q, want the address", got)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.s.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate() = %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}

func FuzzCheckSPIFFEID(f *testing.F) {
	f.Add("spiffe://cluster.local/ns/default/sa/default")
	f.Add("spiffe://a/\n")
	f.Fuzz(func(t *testing.T, id string) {
		if CheckSPIFFEID(id) == nil && strings.ContainsAny(id, " \"'\n\t;{}$\\") {
			t.Fatalf("accepted %q", id)
		}
	})
}

func TestForProxy(t *testing.T) {
	pod := Pod(netip.MustParseAddr("10.0.0.5"), 8080, netip.MustParseAddrPort("10.0.0.6:80"))
	unbound := pod
	unbound.InboundSource = netip.Addr{}
	unbound.App = netip.MustParseAddrPort("127.0.0.1:8080")
	for _, tc := range []struct {
		proxy string
		binds bool
		want  Sidecar
	}{
		{"envoy", true, pod},
		{"nginx", true, pod},
		{"haproxy", true, pod},
		{"caddy", false, unbound},
	} {
		if got := BindsSource(tc.proxy); got != tc.binds {
			t.Errorf("BindsSource(%s) = %v, want %v", tc.proxy, got, tc.binds)
		}
		if got := pod.ForProxy(tc.proxy); got != tc.want {
			t.Errorf("ForProxy(%s) = %+v, want %+v", tc.proxy, got, tc.want)
		}
	}
}

// TestWithInboundSource: none unbinds the inbound side, and so does the
// default for Caddy, which cannot bind it; then the app moves to
// 127.0.0.1 for Caddy unless it was given. Any other source is an IP
// address, bound as given (Caddy's Validate refuses it later).
func TestWithInboundSource(t *testing.T) {
	pod := Pod(netip.MustParseAddr("10.0.0.5"), 8080, netip.MustParseAddrPort("10.0.0.6:80"))
	with := func(src string, app string) Sidecar {
		s := pod
		s.InboundSource = netip.Addr{}
		if src != "" {
			s.InboundSource = netip.MustParseAddr(src)
		}
		s.App = netip.MustParseAddrPort(app)
		return s
	}
	for _, tc := range []struct {
		proxy, src string
		appGiven   bool
		want       Sidecar
		err        string
	}{
		{"envoy", InboundSource, false, pod, ""},
		{"haproxy", "127.0.0.7", false, with("127.0.0.7", "10.0.0.5:8080"), ""},
		{"envoy", NoInboundSource, false, with("", "10.0.0.5:8080"), ""},
		{"nginx", NoInboundSource, true, with("", "10.0.0.5:8080"), ""},
		{"caddy", InboundSource, false, with("", "127.0.0.1:8080"), ""},
		{"caddy", InboundSource, true, with("", "10.0.0.5:8080"), ""},
		{"caddy", NoInboundSource, false, with("", "127.0.0.1:8080"), ""},
		{"caddy", "127.0.0.7", false, with("127.0.0.7", "10.0.0.5:8080"), ""},
		{"envoy", "y", false, Sidecar{}, `"y": not an IP address (or none)`},
		{"caddy", "", false, Sidecar{}, `"": not an IP address (or none)`},
	} {
		got, err := pod.WithInboundSource(tc.proxy, tc.src, tc.appGiven)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s %q: error %v, want %q", tc.proxy, tc.src, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s %q, app given %v: %+v, %v; want %+v", tc.proxy, tc.src, tc.appGiven, got, err, tc.want)
		}
	}
}
