package sidecar

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func TestParseCaptureFlags(t *testing.T) {
	base := Capture{OutboundPort: 15001, InboundPort: 15006, ProxyUID: 1337, ProxyGID: 1337}
	all := CaptureFlags{IncludeOutbound: "*"}
	with := func(f func(*CaptureFlags)) CaptureFlags { c := all; f(&c); return c }
	pfx := netip.MustParsePrefix
	for _, tc := range []struct {
		name  string
		flags CaptureFlags
		want  func(*Capture)
		err   string
	}{
		{"every address", all, func(c *Capture) { c.IncludeOutbound.All = true }, ""},
		{"star among spaces", CaptureFlags{IncludeOutbound: " * "}, func(c *Capture) { c.IncludeOutbound.All = true }, ""},
		{"no address", CaptureFlags{IncludeOutboundPorts: "8080"}, func(c *Capture) { c.IncludeOutboundPorts = []uint16{8080} }, ""},
		{"ports, spaces and empty items", with(func(f *CaptureFlags) { f.ExcludeInbound = " 15090, ,15021,"; f.ExcludeOutbound = "8081" }),
			func(c *Capture) {
				c.IncludeOutbound.All, c.ExcludeInbound, c.ExcludeOutbound = true, []uint16{15090, 15021}, []uint16{8081}
			}, ""},
		{"CIDRs masked", CaptureFlags{IncludeOutbound: "10.1.2.3/8", ExcludeOutboundCIDRs: "198.18.112.1/32"},
			func(c *Capture) {
				c.IncludeOutbound.CIDRs, c.ExcludeOutboundCIDRs = []netip.Prefix{pfx("10.0.0.0/8")}, []netip.Prefix{pfx("198.18.112.1/32")}
			}, ""},
		{"port 0", with(func(f *CaptureFlags) { f.ExcludeOutbound = "0" }), nil, `--exclude-outbound-ports: "0" is not a port (1 to 65535)`},
		{"port too big", with(func(f *CaptureFlags) { f.ExcludeInbound = "65536" }), nil, `--exclude-inbound-ports: "65536" is not a port`},
		{"not a port", with(func(f *CaptureFlags) { f.IncludeOutboundPorts = "http" }), nil, `--include-outbound-ports: "http" is not a port`},
		{"IPv6", with(func(f *CaptureFlags) { f.ExcludeOutboundCIDRs = "::1/128" }), nil, `--exclude-outbound-ip-ranges: "::1/128" is not an IPv4 CIDR`},
		{"star in a list", CaptureFlags{IncludeOutbound: "*,10.0.0.0/8"}, nil, `--include-outbound-ip-ranges: "*" is not an IPv4 CIDR`},
		{"same ports: Validate", all, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := base
			if tc.name == "same ports: Validate" {
				b.InboundPort = b.OutboundPort
			}
			got, err := ParseCaptureFlags(b, tc.flags)
			if tc.want == nil {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := base
			tc.want(&want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %+v\nwant %+v", got, want)
			}
		})
	}
	if got := JoinPorts(IstioCapture.ExcludeInbound); got != "15090,15021,15020" {
		t.Errorf("JoinPorts = %q", got)
	}
	if got := JoinPorts(nil); got != "" {
		t.Errorf("JoinPorts(nil) = %q", got)
	}
}

// FuzzParseCaptureFlags checks that what parses comes back from its own
// text: a port list through JoinPorts, a CIDR list through its prefixes'
// text, each prefix masked and IPv4.
func FuzzParseCaptureFlags(f *testing.F) {
	for _, s := range []string{"", "*", "15090,15021", " 8080 , ", "10.0.0.0/8,198.18.112.1/32", "0", "::1/128", "10.1.2.3/8"} {
		f.Add(s)
	}
	base := IstioCapture
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCaptureFlags(base, CaptureFlags{ExcludeOutbound: s, IncludeOutbound: "*"})
		if err == nil {
			again, err := ParseCaptureFlags(base, CaptureFlags{ExcludeOutbound: JoinPorts(c.ExcludeOutbound), IncludeOutbound: "*"})
			if err != nil || !reflect.DeepEqual(again.ExcludeOutbound, c.ExcludeOutbound) {
				t.Errorf("ports %q → %v → %q: %v, %v", s, c.ExcludeOutbound, JoinPorts(c.ExcludeOutbound), again.ExcludeOutbound, err)
			}
		}
		c, err = ParseCaptureFlags(base, CaptureFlags{IncludeOutbound: s})
		if err != nil || c.IncludeOutbound.All {
			return
		}
		var text []string
		for _, p := range c.IncludeOutbound.CIDRs {
			if !p.Addr().Is4() || p != p.Masked() {
				t.Errorf("%q: %v is not a masked IPv4 prefix", s, p)
			}
			text = append(text, p.String())
		}
		again, err := ParseCaptureFlags(base, CaptureFlags{IncludeOutbound: strings.Join(text, ",")})
		if err != nil || !reflect.DeepEqual(again.IncludeOutbound, c.IncludeOutbound) {
			t.Errorf("CIDRs %q → %v: again %v, %v", s, c.IncludeOutbound, again.IncludeOutbound, err)
		}
	})
}
