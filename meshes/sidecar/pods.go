package sidecar

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"
)

// Pods are two pods for a sidecar path: a client and a server network
// namespace joined by a veth pair, with addresses in 198.18.0.0/15 (the
// range RFC 2544 reserves for benchmarks). A sweep makes a pair per
// sidecar path, so that every path has its own pods and capture rules.
type Pods struct {
	Client, Server     string     // namespace names
	ClientIP, ServerIP netip.Addr // on the veth pair
	made               []string
}

// NewPods makes the pair prefix+"c" and prefix+"s" on subnet
// 198.18.SUBNET.0/24 (client .1, server .2). It needs root; on error
// nothing is left.
func NewPods(ctx context.Context, prefix string, subnet uint8) (*Pods, error) {
	if err := RootMissing(); err != nil {
		return nil, err
	}
	if len(prefix) > 12 {
		return nil, fmt.Errorf("sidecar: pod prefix %q is longer than 12 bytes (interface names are at most 15)", prefix)
	}
	p := &Pods{Client: prefix + "c", Server: prefix + "s",
		ClientIP: netip.AddrFrom4([4]byte{198, 18, subnet, 1}), ServerIP: netip.AddrFrom4([4]byte{198, 18, subnet, 2})}
	steps := [][]string{
		{"netns", "add", p.Client},
		{"netns", "add", p.Server},
		{"link", "add", "v" + p.Client, "netns", p.Client, "type", "veth", "peer", "name", "v" + p.Server, "netns", p.Server},
		{"-n", p.Client, "addr", "add", p.ClientIP.String() + "/24", "dev", "v" + p.Client},
		{"-n", p.Server, "addr", "add", p.ServerIP.String() + "/24", "dev", "v" + p.Server},
	}
	for _, ns := range []string{p.Client, p.Server} {
		steps = append(steps, []string{"-n", ns, "link", "set", "lo", "up"}, []string{"-n", ns, "link", "set", "v" + ns, "up"})
	}
	for _, args := range steps {
		out, err := exec.CommandContext(ctx, "ip", args...).CombinedOutput()
		if len(args) == 3 && args[0] == "netns" && err == nil {
			p.made = append(p.made, args[2])
		}
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("sidecar: ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return p, nil
}

// Close deletes the namespaces (the veth pair goes with them).
func (p *Pods) Close() error {
	var errs []error
	for _, ns := range p.made {
		if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("sidecar: ip netns del %s: %v: %s", ns, err, strings.TrimSpace(string(out))))
		}
	}
	p.made = nil
	return errors.Join(errs...)
}
