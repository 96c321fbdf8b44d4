package sidecar

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
	"text/template"

	"loadgen/meshes/layout"
	"loadgen/meshes/proxyproc"
)

// Capture is what istio-iptables is told: where captured connections go,
// whose traffic is exempt, which inbound ports are not captured and which
// outbound connections are.
type Capture struct {
	OutboundPort   uint16   // -p: ISTIO_REDIRECT's target
	InboundPort    uint16   // -z: ISTIO_IN_REDIRECT's target
	ProxyUID       uint32   // -u
	ProxyGID       uint32   // -g
	ExcludeInbound []uint16 // -d: ports that reach the pod uncaptured

	// ExcludeOutbound (-o) are ports the pod's connections reach
	// uncaptured, whatever their address.
	ExcludeOutbound []uint16
	// ExcludeOutboundCIDRs (-x) are addresses reached uncaptured.
	ExcludeOutboundCIDRs []netip.Prefix
	// IncludeOutboundPorts (-q) are ports captured whatever the address.
	IncludeOutboundPorts []uint16
	// IncludeOutbound (-i) is what else is captured: every address ("*"),
	// some ranges, or nothing.
	IncludeOutbound Ranges
}

// Ranges are istio-iptables' -i: every address, or the CIDRs listed (none
// captures no address but IncludeOutboundPorts').
type Ranges struct {
	All   bool
	CIDRs []netip.Prefix
}

// IstioCapture is what Istio's injector runs in every pod: istio-iptables
// -p 15001 -z 15006 -u 1337 -g 1337 -m REDIRECT -i '*' -x "" -b '*' -d
// 15090,15021,15020.
var IstioCapture = Capture{
	OutboundPort:    layout.OutboundPort,
	InboundPort:     layout.InboundPort,
	ProxyUID:        layout.ProxyUID,
	ProxyGID:        layout.ProxyGID,
	ExcludeInbound:  []uint16{layout.StatsPort, 15021, 15020},
	IncludeOutbound: Ranges{All: true},
}

// The nat table istio-iptables writes for capture, in its order: every
// inbound TCP connection to ISTIO_INBOUND, then (but for the excluded
// ports and 15008, HBONE) redirected to the inbound port; every outbound
// one through ISTIO_OUTPUT, where the excluded ports return first, then
// the inbound side's connections from 127.0.0.6 to the app, the proxy's
// own connections (by UID and by GID) and loopback traffic return, a
// proxy's connection to its own pod IP over lo goes back to the inbound
// port; then the excluded ranges return, the included ports are
// redirected to the outbound port, and the included ranges are (with
// ranges listed, whatever else returns).
var rulesTemplate = template.Must(template.New("nat").Parse(`*nat
-N ISTIO_INBOUND
-N ISTIO_REDIRECT
-N ISTIO_IN_REDIRECT
-N ISTIO_OUTPUT
-A ISTIO_INBOUND -p tcp --dport 15008 -j RETURN
-A ISTIO_REDIRECT -p tcp -j REDIRECT --to-ports {{.OutboundPort}}
-A ISTIO_IN_REDIRECT -p tcp -j REDIRECT --to-ports {{.InboundPort}}
-A PREROUTING -p tcp -j ISTIO_INBOUND
{{- range .ExcludeInbound}}
-A ISTIO_INBOUND -p tcp --dport {{.}} -j RETURN
{{- end}}
-A ISTIO_INBOUND -p tcp -j ISTIO_IN_REDIRECT
-A OUTPUT -p tcp -j ISTIO_OUTPUT
{{- range .ExcludeOutbound}}
-A ISTIO_OUTPUT -p tcp --dport {{.}} -j RETURN
{{- end}}
-A ISTIO_OUTPUT -o lo -s 127.0.0.6/32 -j RETURN
-A ISTIO_OUTPUT -o lo ! -d 127.0.0.1/32 -p tcp ! --dport 15008 -m owner --uid-owner {{.ProxyUID}} -j ISTIO_IN_REDIRECT
-A ISTIO_OUTPUT -o lo -m owner ! --uid-owner {{.ProxyUID}} -j RETURN
-A ISTIO_OUTPUT -m owner --uid-owner {{.ProxyUID}} -j RETURN
-A ISTIO_OUTPUT -o lo ! -d 127.0.0.1/32 -p tcp ! --dport 15008 -m owner --gid-owner {{.ProxyGID}} -j ISTIO_IN_REDIRECT
-A ISTIO_OUTPUT -o lo -m owner ! --gid-owner {{.ProxyGID}} -j RETURN
-A ISTIO_OUTPUT -m owner --gid-owner {{.ProxyGID}} -j RETURN
-A ISTIO_OUTPUT -d 127.0.0.1/32 -j RETURN
{{- range .ExcludeOutboundCIDRs}}
-A ISTIO_OUTPUT -d {{.}} -j RETURN
{{- end}}
{{- range .IncludeOutboundPorts}}
-A ISTIO_OUTPUT -p tcp --dport {{.}} -j ISTIO_REDIRECT
{{- end}}
{{- if .IncludeOutbound.All}}
-A ISTIO_OUTPUT -j ISTIO_REDIRECT
{{- else if .IncludeOutbound.CIDRs}}
{{- range .IncludeOutbound.CIDRs}}
-A ISTIO_OUTPUT -d {{.}} -j ISTIO_REDIRECT
{{- end}}
-A ISTIO_OUTPUT -j RETURN
{{- end}}
COMMIT
`))

// chains are the chains Rules creates, and the hooks that jump to them.
var (
	chains = []string{"ISTIO_INBOUND", "ISTIO_REDIRECT", "ISTIO_IN_REDIRECT", "ISTIO_OUTPUT"}
	jumps  = []string{"-D PREROUTING -p tcp -j ISTIO_INBOUND", "-D OUTPUT -p tcp -j ISTIO_OUTPUT"}
)

// Rules is the iptables-restore input of c.
func (c Capture) Rules() []byte {
	var b bytes.Buffer
	rulesTemplate.Execute(&b, c) // fields are numbers and prefixes: it cannot fail
	return b.Bytes()
}

// Validate reports the first thing wrong with c, in one line: IPv4 only,
// as the rules are iptables' (not ip6tables').
func (c Capture) Validate() error {
	if c.OutboundPort == 0 || c.InboundPort == 0 || c.OutboundPort == c.InboundPort {
		return fmt.Errorf("capture: outbound port %d and inbound port %d must be two ports", c.OutboundPort, c.InboundPort)
	}
	for _, p := range append(append(append([]uint16{}, c.ExcludeInbound...), c.ExcludeOutbound...), c.IncludeOutboundPorts...) {
		if p == 0 {
			return fmt.Errorf("capture: port 0 in a port list")
		}
	}
	for _, p := range append(append([]netip.Prefix{}, c.ExcludeOutboundCIDRs...), c.IncludeOutbound.CIDRs...) {
		if !p.IsValid() || !p.Addr().Is4() {
			return fmt.Errorf("capture: range %s: want an IPv4 CIDR", p)
		}
	}
	if c.IncludeOutbound.All && len(c.IncludeOutbound.CIDRs) > 0 {
		return fmt.Errorf("capture: outbound ranges are every address (*) or a list, not both")
	}
	return nil
}

// Install writes c's rules into this process's network namespace (a
// pod's, from its init container), leaving the rest of its nat table
// alone. It needs CAP_NET_ADMIN and iptables-restore.
func (c Capture) Install(ctx context.Context) error {
	if err := c.Validate(); err != nil {
		return err
	}
	return c.install(ctx, "")
}

// undo is the iptables-restore input that removes what Rules added.
func undo() []byte {
	var b strings.Builder
	b.WriteString("*nat\n")
	for _, j := range jumps {
		b.WriteString(j + "\n")
	}
	for _, c := range chains {
		b.WriteString("-F " + c + "\n")
	}
	for _, c := range chains {
		b.WriteString("-X " + c + "\n")
	}
	b.WriteString("COMMIT\n")
	return []byte(b.String())
}

// iptablesRestore is found once per call: Debian's package iptables.
func iptablesRestore() (string, error) {
	return proxyproc.Find("", "iptables-restore", "/usr/sbin/iptables-restore", "apt-get install iptables")
}

// install adds c's rules to the nat table of ns, leaving the rest of the
// table alone (--noflush).
func (c Capture) install(ctx context.Context, ns string) error {
	return restore(ctx, ns, c.Rules())
}

// remove takes the rules out of ns again.
func remove(ctx context.Context, ns string) error { return restore(ctx, ns, undo()) }

func restore(ctx context.Context, ns string, rules []byte) error {
	bin, err := iptablesRestore()
	if err != nil {
		return fmt.Errorf("sidecar: %w", err)
	}
	out, err := runIn(ctx, ns, rules, bin, "--noflush", "-w", "5")
	if err != nil {
		where := "network namespace " + ns
		if ns == "" {
			where = "this network namespace"
		}
		return fmt.Errorf("sidecar: iptables-restore in %s: %v: %s", where, err, strings.TrimSpace(out))
	}
	return nil
}

// Save is `iptables-save -t TABLE` inside ns ("" for this process's own).
func Save(ctx context.Context, ns, table string) (string, error) {
	bin, err := proxyproc.Find("", "iptables-save", "/usr/sbin/iptables-save", "apt-get install iptables")
	if err != nil {
		return "", err
	}
	out, err := runIn(ctx, ns, nil, bin, "-t", table)
	if err != nil {
		return "", fmt.Errorf("iptables-save -t %s in %q: %v: %s", table, ns, err, out)
	}
	return out, nil
}

// runIn runs a command inside the network namespace ns: forked from a
// thread that is in it, so the command and iptables' netlink socket are.
func runIn(ctx context.Context, ns string, stdin []byte, name string, args ...string) (string, error) {
	var out []byte
	err := proxyproc.In(ns, func() error {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Stdin = bytes.NewReader(stdin)
		var err error
		out, err = cmd.CombinedOutput()
		return err
	})
	return string(out), err
}

// ChainsIn reports which of the capture chains the nat table of ns has.
func ChainsIn(ctx context.Context, ns string) ([]string, error) {
	nat, err := Save(ctx, ns, "nat")
	if err != nil {
		return nil, err
	}
	var found []string
	for _, c := range chains {
		if strings.Contains(nat, ":"+c+" ") {
			found = append(found, c)
		}
	}
	return found, nil
}
