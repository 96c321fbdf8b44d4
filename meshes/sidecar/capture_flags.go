package sidecar

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// CaptureFlags are istio-iptables' list flags as text, under the long
// names loadgen mesh capture gives them (and meshes/k8s' init container
// passes): comma-separated ports or IPv4 CIDRs, "" for none;
// IncludeOutbound is "*" for every address.
type CaptureFlags struct {
	ExcludeInbound       string // --exclude-inbound-ports (-d)
	ExcludeOutbound      string // --exclude-outbound-ports (-o)
	IncludeOutboundPorts string // --include-outbound-ports (-q)
	IncludeOutbound      string // --include-outbound-ip-ranges (-i)
	ExcludeOutboundCIDRs string // --exclude-outbound-ip-ranges (-x)
}

// ParseCaptureFlags is base (its ports and the proxy's UID and GID) with
// the lists f gives, validated; an error names the flag and the item.
func ParseCaptureFlags(base Capture, f CaptureFlags) (Capture, error) {
	capt := base
	var err error
	if capt.ExcludeInbound, err = parsePorts("--exclude-inbound-ports", f.ExcludeInbound); err != nil {
		return capt, err
	}
	if capt.ExcludeOutbound, err = parsePorts("--exclude-outbound-ports", f.ExcludeOutbound); err != nil {
		return capt, err
	}
	if capt.IncludeOutboundPorts, err = parsePorts("--include-outbound-ports", f.IncludeOutboundPorts); err != nil {
		return capt, err
	}
	if capt.ExcludeOutboundCIDRs, err = parseCIDRs("--exclude-outbound-ip-ranges", f.ExcludeOutboundCIDRs); err != nil {
		return capt, err
	}
	capt.IncludeOutbound = Ranges{}
	if strings.TrimSpace(f.IncludeOutbound) == "*" {
		capt.IncludeOutbound.All = true
	} else if capt.IncludeOutbound.CIDRs, err = parseCIDRs("--include-outbound-ip-ranges", f.IncludeOutbound); err != nil {
		return capt, err
	}
	return capt, capt.Validate()
}

// JoinPorts is ports as a list flag takes them: "15090,15021".
func JoinPorts(ports []uint16) string {
	var s []string
	for _, p := range ports {
		s = append(s, strconv.Itoa(int(p)))
	}
	return strings.Join(s, ",")
}

// parsePorts reads "8080,8081" (empty: none).
func parsePorts(flag, s string) ([]uint16, error) {
	var out []uint16
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.ParseUint(f, 10, 16)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("%s: %q is not a port (1 to 65535)", flag, f)
		}
		out = append(out, uint16(n))
	}
	return out, nil
}

// parseCIDRs reads "10.0.0.0/8,198.18.112.1/32" (empty: none).
func parseCIDRs(flag, s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil || !p.Addr().Is4() {
			return nil, fmt.Errorf("%s: %q is not an IPv4 CIDR", flag, f)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
