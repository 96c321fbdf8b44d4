package node

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// kube-proxy's and the CNI plugins' iptables chains a node leaves.

func ours(chain string) bool {
	for _, p := range chainPrefixes {
		if strings.HasPrefix(chain, p) {
			return true
		}
	}
	return false
}

// chains lists the node's chains left in iptables and ip6tables, and the
// nft tables of kube-proxy's nftables mode.
func chains(ctx context.Context) []string {
	var out []string
	for _, cmd := range []string{"iptables", "ip6tables"} {
		for _, t := range chainTables {
			s, err := run(ctx, cmd+"-save", "-t", t)
			if err != nil {
				continue
			}
			for _, l := range strings.Split(s, "\n") {
				if strings.HasPrefix(l, ":") {
					if name := strings.Fields(l[1:])[0]; ours(name) {
						out = append(out, fmt.Sprintf("%s -t %s chain %s", cmd, t, name))
					}
				}
			}
		}
	}
	if s, err := run(ctx, "nft", "list", "tables"); err == nil {
		for _, l := range strings.Split(s, "\n") {
			if f := strings.Fields(l); len(f) == 3 && f[0] == "table" && f[2] == "kube-proxy" {
				out = append(out, "nft table "+f[1]+" kube-proxy")
			}
		}
	}
	return out
}

// removeChains deletes what kube-proxy --cleanup leaves: the kubelet's
// canary chains, CNI chains of pods removed without the runtime, and
// kube-proxy's nft tables.
func removeChains(ctx context.Context) error {
	var errs []error
	for _, cmd := range []string{"iptables", "ip6tables"} {
		for _, t := range chainTables {
			s, err := run(ctx, cmd+"-save", "-t", t)
			if err != nil {
				continue
			}
			var mine []string
			for _, l := range strings.Split(s, "\n") {
				switch {
				case strings.HasPrefix(l, ":"):
					if name := strings.Fields(l[1:])[0]; ours(name) {
						mine = append(mine, name)
					}
				case strings.HasPrefix(l, "-A "):
					// A rule of a chain not ours that jumps to one of ours.
					f := saveFields(l)
					if len(f) > 1 && !ours(f[1]) && jumpsToOurs(f) {
						if _, err := run(ctx, cmd, append([]string{"-w", "-t", t, "-D"}, f[1:]...)...); err != nil {
							errs = append(errs, err)
						}
					}
				}
			}
			for _, c := range mine {
				_, _ = run(ctx, cmd, "-w", "-t", t, "-F", c)
			}
			for _, c := range mine {
				if _, err := run(ctx, cmd, "-w", "-t", t, "-X", c); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	for _, fam := range []string{"ip", "ip6"} {
		if _, err := run(ctx, "nft", "list", "table", fam, "kube-proxy"); err == nil {
			if _, err := run(ctx, "nft", "delete", "table", fam, "kube-proxy"); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// saveFields splits a rule as iptables-save prints it into the arguments
// that iptables takes back: a quoted argument ("kubernetes load balancer
// firewall", a comment) is one, without its quotes (a backslash keeps the
// next character).
func saveFields(l string) []string {
	var out []string
	var b strings.Builder
	in, quoted, esc := false, false, false
	for _, r := range l {
		switch {
		case esc:
			b.WriteRune(r)
			esc = false
		case r == '\\' && quoted:
			esc = true
		case r == '"':
			quoted, in = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, b.String())
	}
	return out
}

func jumpsToOurs(f []string) bool {
	for i := 0; i+1 < len(f); i++ {
		if (f[i] == "-j" || f[i] == "-g") && ours(f[i+1]) {
			return true
		}
	}
	return false
}
