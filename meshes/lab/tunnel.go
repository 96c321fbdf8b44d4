package lab

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os/exec"
	"strings"
	"time"
)

// TunnelPort is the UDP port of the udp mode's tunnel, Flannel udp's.
const TunnelPort = 8285

// TunnelConfig is one node's udp tunnel, Flannel's udp backend: packets
// the kernel routes into the TUN device Dev go, each in one UDP datagram,
// from Listen to the Peer of the route that holds their destination;
// datagrams received on Listen are written back into Dev.
type TunnelConfig struct {
	Dev    string
	Listen string // host:port, IPv4
	Routes []TunnelRoute
}

// TunnelRoute sends packets for Prefix to the tunnel at Peer.
type TunnelRoute struct {
	Prefix string // CIDR
	Peer   string // host:port
}

// Args are the command-line arguments ParseTunnelArgs reads back:
// DEV LISTEN PREFIX=PEER...
func (c TunnelConfig) Args() []string {
	args := []string{c.Dev, c.Listen}
	for _, r := range c.Routes {
		args = append(args, r.Prefix+"="+r.Peer)
	}
	return args
}

// ParseTunnelArgs reads DEV LISTEN PREFIX=PEER... (what Args writes), e.g.
// flannel0 198.18.0.1:8285 198.18.2.0/24=198.18.0.2:8285.
func ParseTunnelArgs(args []string) (TunnelConfig, error) {
	var c TunnelConfig
	if len(args) < 3 {
		return c, errors.New("want DEV LISTEN PREFIX=PEER..., e.g. flannel0 198.18.0.1:8285 198.18.2.0/24=198.18.0.2:8285")
	}
	c.Dev = args[0]
	if c.Dev == "" || len(c.Dev) > 15 || strings.ContainsAny(c.Dev, "/ \t\n\x00") {
		return c, fmt.Errorf("device %q: want a name of 1 to 15 bytes without '/' or spaces", c.Dev)
	}
	if _, err := parseAddrPort4(args[1]); err != nil {
		return c, fmt.Errorf("listen address: %w", err)
	}
	c.Listen = args[1]
	for _, a := range args[2:] {
		prefix, peer, ok := strings.Cut(a, "=")
		if !ok {
			return c, fmt.Errorf("route %q: want PREFIX=PEER, e.g. 198.18.2.0/24=198.18.0.2:8285", a)
		}
		p, err := netip.ParsePrefix(prefix)
		if err != nil || !p.Addr().Is4() {
			return c, fmt.Errorf("route %q: %q is not an IPv4 prefix", a, prefix)
		}
		if _, err := parseAddrPort4(peer); err != nil {
			return c, fmt.Errorf("route %q: peer: %w", a, err)
		}
		c.Routes = append(c.Routes, TunnelRoute{Prefix: p.Masked().String(), Peer: peer})
	}
	return c, nil
}

func parseAddrPort4(s string) (netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return ap, fmt.Errorf("%q is not IPv4:PORT", s)
	}
	if !ap.Addr().Is4() || ap.Port() == 0 {
		return ap, fmt.Errorf("%q is not IPv4:PORT with a port above 0", s)
	}
	return ap, nil
}

// TunnelReady is the line a tunnel prints on stdout once it forwards.
const TunnelReady = "udp tunnel ready"

// startTunnel runs Config.TunnelCommand with tc's arguments in ns and waits
// for it to say it is ready.
func startTunnel(ctx context.Context, l *Lab, ns string, tc TunnelConfig) (*exec.Cmd, error) {
	argv := append(append([]string(nil), l.cfg.TunnelCommand...), tc.Args()...)
	// Not CommandContext: ctx bounds the setup, the tunnel lives until Close.
	cmd := l.Command(context.Background(), ns, argv[0], argv[1:]...)
	cmd.SysProcAttr = diesWithParent()
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &limitedWriter{w: &stderr, n: 4096}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("lab: udp tunnel in %s: %w", ns, err)
	}
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		found := false
		for sc.Scan() {
			if !found && sc.Text() == TunnelReady {
				found = true
				ready <- true
			}
		}
		if !found {
			ready <- false
		}
	}()
	var why string
	select {
	case ok := <-ready:
		if ok {
			return cmd, nil
		}
		why = "exited"
	case <-time.After(10 * time.Second):
		why = "not ready after 10s"
	case <-ctx.Done():
		why = ctx.Err().Error()
	}
	stopProcess(cmd)
	return nil, fmt.Errorf("lab: udp tunnel in %s (%s) %s: %s", ns, strings.Join(argv, " "), why, strings.TrimSpace(stderr.String()))
}

// limitedWriter keeps the first n bytes written to it.
type limitedWriter struct {
	w io.Writer
	n int
}

func (lw *limitedWriter) Write(p []byte) (int, error) {
	if lw.n > 0 {
		k := min(len(p), lw.n)
		lw.w.Write(p[:k])
		lw.n -= k
	}
	return len(p), nil
}
