package lab

import (
	"slices"
	"strings"
	"testing"
)

func TestParseModes(t *testing.T) {
	all, err := ParseModes("")
	if err != nil || !slices.Equal(all, Modes()) {
		t.Fatalf("ParseModes(\"\") = %v, %v; want every mode", all, err)
	}
	got, err := ParseModes(" vxlan, host-gw ,")
	if err != nil || !slices.Equal(got, []Mode{VXLAN, HostGW}) {
		t.Errorf("ParseModes = %v, %v", got, err)
	}
	for _, bad := range []string{"wireguard", "vxlan,vxlan", "VXLAN"} {
		if _, err := ParseModes(bad); err == nil || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseModes(%q) = %v, want a one-line error", bad, err)
		}
	}
	for _, m := range Modes() {
		if m.Description() == "" || m.mtu() < 1400 || m.cross() == "" {
			t.Errorf("%s: description %q, mtu %d, cross %q", m, m.Description(), m.mtu(), m.cross())
		}
	}
}

// TestPathsPerMode checks that every mode has the nine paths and the
// baseline, and only macvlan has paths that do not apply.
func TestPathsPerMode(t *testing.T) {
	for _, m := range Modes() {
		l := &Lab{prefix: "x-", mode: m}
		paths := l.makePaths()
		if len(paths) != 10 {
			t.Fatalf("%s: %d paths", m, len(paths))
		}
		for _, p := range paths {
			na := p.NotApplicable != ""
			if na != (m == Macvlan && (IsServicePath(p.Name) || p.Name == PodOwnNode)) {
				t.Errorf("%s %s: not applicable %q", m, p.Name, p.NotApplicable)
			}
			if !na && (p.ClientNS == "" || p.ServerNS == "" || p.Dial == "" || p.Listen == "" || p.Description == "") {
				t.Errorf("%s %s: incomplete %+v", m, p.Name, p)
			}
			if p.Service != (!na && IsServicePath(p.Name)) {
				t.Errorf("%s %s: Service %v", m, p.Name, p.Service)
			}
		}
	}
}

func TestParseTunnelArgs(t *testing.T) {
	c := TunnelConfig{Dev: "flannel0", Listen: "198.18.0.1:8285",
		Routes: []TunnelRoute{{Prefix: "198.18.2.0/24", Peer: "198.18.0.2:8285"}}}
	got, err := ParseTunnelArgs(c.Args())
	if err != nil || !slices.Equal(got.Routes, c.Routes) || got.Dev != c.Dev || got.Listen != c.Listen {
		t.Fatalf("ParseTunnelArgs(Args()) = %+v, %v; want %+v", got, err, c)
	}
	for _, bad := range [][]string{
		nil, {"flannel0", "198.18.0.1:8285"},
		{"", "198.18.0.1:8285", "198.18.2.0/24=198.18.0.2:8285"},
		{"a/b", "198.18.0.1:8285", "198.18.2.0/24=198.18.0.2:8285"},
		{"flannel0", "198.18.0.1", "198.18.2.0/24=198.18.0.2:8285"},
		{"flannel0", "[::1]:8285", "198.18.2.0/24=198.18.0.2:8285"},
		{"flannel0", "198.18.0.1:8285", "198.18.2.0/24"},
		{"flannel0", "198.18.0.1:8285", "fd00::/8=198.18.0.2:8285"},
		{"flannel0", "198.18.0.1:8285", "198.18.2.0/24=198.18.0.2:0"},
	} {
		if _, err := ParseTunnelArgs(bad); err == nil {
			t.Errorf("ParseTunnelArgs(%q) = nil error", bad)
		}
	}
}

func FuzzParseTunnelArgs(f *testing.F) {
	f.Add("flannel0 198.18.0.1:8285 198.18.2.0/24=198.18.0.2:8285")
	f.Add("x 1.2.3.4:1 0.0.0.0/0=1.2.3.4:65535 10.0.0.0/8=5.6.7.8:9")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseTunnelArgs(strings.Fields(s))
		if err != nil {
			return
		}
		again, err := ParseTunnelArgs(c.Args())
		if err != nil || !slices.Equal(again.Routes, c.Routes) || again.Dev != c.Dev || again.Listen != c.Listen {
			t.Fatalf("%q: round trip %+v, %v; want %+v", s, again, err, c)
		}
	})
}

func FuzzParseModes(f *testing.F) {
	f.Add("host-gw,vxlan")
	f.Add(" ebpf , udp,")
	f.Fuzz(func(t *testing.T, s string) {
		ms, err := ParseModes(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: a multi-line error", s)
			}
			return
		}
		seen := map[Mode]bool{}
		for _, m := range ms {
			if !m.Valid() || seen[m] {
				t.Fatalf("%q: ParseModes gave %v", s, ms)
			}
			seen[m] = true
		}
	})
}
