//go:build linux

package lab

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cilium/ebpf"

	"loadgen/meshes/leftover"
)

// echoAddrEnv tells TestHelperEchoServer, run inside a namespace by
// startEcho, which address to serve.
const echoAddrEnv = "LAB_TEST_ECHO_ADDR"

// TestHelperEchoServer is not a test: it is the echo server that
// startEcho runs inside a lab namespace by re-running this test binary
// (the helper-process pattern). Without echoAddrEnv it does nothing.
func TestHelperEchoServer(t *testing.T) {
	addr := os.Getenv(echoAddrEnv)
	if addr == "" {
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "echo server:", err)
		os.Exit(2)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
	fmt.Println("ready")
	// Serve until the parent closes stdin (or dies), with a time limit
	// in case it never does.
	stdinClosed := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(stdinClosed)
	}()
	select {
	case <-stdinClosed:
	case <-time.After(30 * time.Second):
	}
}

// requireLab skips the test where the lab cannot run, except in CI,
// which must provide root, iproute2 and iptables.
func requireLab(t *testing.T, cfg Config) {
	t.Helper()
	if err := Available(cfg); err != nil {
		if os.Getenv("CI") == "" {
			t.Skip(err)
		}
		t.Fatal(err)
	}
}

// tunnelEnv tells TestHelperUDPTunnel, run in a node by the udp mode, to
// be the tunnel.
const tunnelEnv = "LAB_TEST_UDP_TUNNEL"

// TestHelperUDPTunnel is not a test: it is the udp mode's tunnel process
// (Config.TunnelCommand), the arguments after "--" its configuration.
func TestHelperUDPTunnel(t *testing.T) {
	if os.Getenv(tunnelEnv) == "" {
		return
	}
	c, err := ParseTunnelArgs(flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "udp tunnel:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	err = RunUDPTunnel(ctx, c, func() { fmt.Println(TunnelReady) })
	if err != nil {
		fmt.Fprintln(os.Stderr, "udp tunnel:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// testConfig is a lab of mode whose tunnel is this test binary.
func testConfig(t *testing.T, mode Mode, prefix string) Config {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(tunnelEnv, "1") // inherited by `ip netns exec`
	return Config{Mode: mode, Prefix: prefix,
		TunnelCommand: []string{exe, "-test.run=^TestHelperUDPTunnel$", "-test.count=1", "--"}}
}

// startLab starts a lab of cfg and closes it when the test ends.
func startLab(t *testing.T, cfg Config) *Lab {
	t.Helper()
	if err := Cleanup(cfg.Prefix); err != nil { // a crashed earlier run
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	})
	return l
}

// startEcho runs TestHelperEchoServer inside ns, listening on addr, and
// stops it when the test ends.
func startEcho(t *testing.T, l *Lab, ns, addr string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := l.Command(ctx, ns, exe, "-test.run=^TestHelperEchoServer$", "-test.count=1")
	cmd.Env = append(os.Environ(), echoAddrEnv+"="+addr,
		// A -race binary otherwise sleeps 1s at exit, per server.
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdoutR, stdoutW := io.Pipe()
	cmd.Stdout = stdoutW
	var stderr bytes.Buffer // read only after Wait returns
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		stdoutW.Close()
		exited <- err
	}()
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdoutR)
		found := false
		for !found && sc.Scan() {
			found = sc.Text() == "ready"
		}
		ready <- found
		io.Copy(io.Discard, stdoutR) // the helper's "PASS"
	}()

	stop := func() {
		stdin.Close()
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			cancel()
			<-exited
		}
		cancel()
	}
	select {
	case ok := <-ready:
		if !ok {
			stop()
			t.Fatalf("echo server in %s on %s did not start: %s", ns, addr, stderr.String())
		}
	case <-time.After(10 * time.Second):
		stop()
		t.Fatalf("echo server in %s on %s: not ready after 10s", ns, addr)
	}
	t.Cleanup(stop)
}

// dialIn connects to addr from inside the namespace ns. Only the socket
// has to be created there: it stays in that namespace for its lifetime.
func dialIn(ns, addr string) (net.Conn, error) {
	var c net.Conn
	err := inNetns(ns, func() error {
		var err error
		c, err = net.DialTimeout("tcp", addr, 5*time.Second)
		return err
	})
	return c, err
}

// checkEcho sends a few KB over a connection dialed from the path's
// client namespace and checks they come back unchanged.
func checkEcho(t *testing.T, p Path) {
	t.Helper()
	addr := p.Dial
	c, err := dialIn(p.ClientNS, addr)
	if err != nil {
		t.Fatalf("%s: dial %s from %s: %v", p.Name, addr, p.ClientNS, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	// Larger than one 1450-byte overlay MTU, so segmentation is exercised.
	sent := make([]byte, 16<<10)
	rand.Read(sent)
	writeErr := make(chan error, 1)
	go func() {
		_, err := c.Write(sent)
		writeErr <- err
	}()
	got := make([]byte, len(sent))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("%s: read echo: %v", p.Name, err)
	}
	if err := <-writeErr; err != nil {
		t.Fatalf("%s: write: %v", p.Name, err)
	}
	if !bytes.Equal(got, sent) {
		t.Fatalf("%s: echo differs from what was sent", p.Name)
	}
}

// counter reads a figure inside ns: a device's transmitted packets
// (/proc/net/dev) or IP's forwarded datagrams (/proc/net/snmp).
func txPackets(t *testing.T, ns, dev string) uint64 {
	t.Helper()
	out, err := run(context.Background(), "ip", "netns", "exec", ns, "cat", "/proc/net/dev")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out, "\n") {
		name, counters, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(name) != dev {
			continue
		}
		// rx: bytes packets errs drop fifo frame compressed multicast,
		// then tx: bytes packets ...
		f := strings.Fields(counters)
		if len(f) < 10 {
			t.Fatalf("%s: short /proc/net/dev line %q", ns, line)
		}
		n, err := strconv.ParseUint(f[9], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	t.Fatalf("%s: no device %s in /proc/net/dev:\n%s", ns, dev, out)
	return 0
}

// forwarded is the node's count of IP datagrams it forwarded.
func forwarded(t *testing.T, ns string) uint64 {
	t.Helper()
	out, err := run(context.Background(), "ip", "netns", "exec", ns, "cat", "/proc/net/snmp")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	for i := 0; i+1 < len(lines); i += 2 {
		head, vals := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		if len(head) == 0 || head[0] != "Ip:" || len(vals) != len(head) {
			continue
		}
		for j, h := range head {
			if h == "ForwDatagrams" {
				n, err := strconv.ParseUint(vals[j], 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				return n
			}
		}
	}
	t.Fatalf("%s: no Ip ForwDatagrams in /proc/net/snmp:\n%s", ns, out)
	return 0
}

// dnatPackets sums the packet counters of node1's Service DNAT rules.
func dnatPackets(t *testing.T, l *Lab) uint64 {
	t.Helper()
	out, err := run(context.Background(), "ip", "netns", "exec", l.ns(node1),
		"iptables", "-w", "-t", "nat", "-L", "KUBE-SERVICES", "-v", "-n", "-x")
	if err != nil {
		t.Fatal(err)
	}
	var sum uint64
	rules, udp := 0, 0
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "DNAT") {
			if slices.Contains(strings.Fields(line), "udp") {
				udp++
			}
			n, err := strconv.ParseUint(strings.Fields(line)[0], 10, 64)
			if err != nil {
				t.Fatalf("DNAT rule line %q: %v", line, err)
			}
			sum += n
			rules++
		}
	}
	if rules != 4 || udp != 2 {
		t.Fatalf("node1's KUBE-SERVICES has %d DNAT rules (%d UDP), want a TCP and a UDP one for each of the 2 Services:\n%s", rules, udp, out)
	}
	return sum
}

// labNamespaces lists the existing namespaces whose names start with prefix.
func labNamespaces(t *testing.T, prefix string) []string {
	t.Helper()
	all, err := listNS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, ns := range all {
		if strings.HasPrefix(ns, prefix) {
			names = append(names, ns)
		}
	}
	return names
}

// startServers starts one echo server per distinct (namespace, address)
// of the applicable paths.
func startServers(t *testing.T, l *Lab, paths []Path) {
	t.Helper()
	started := map[[2]string]bool{}
	for _, p := range paths {
		key := [2]string{p.ServerNS, p.Listen}
		if p.NotApplicable == "" && !started[key] {
			started[key] = true
			startEcho(t, l, p.ServerNS, p.Listen)
		}
	}
}

// hostState is what of the host (the test's own network namespace) a lab
// must leave as it found it.
func hostState(t *testing.T) map[string]string {
	t.Helper()
	state := map[string]string{}
	for name, argv := range map[string][]string{
		"routes":   {"ip", "route", "show", "table", "all"},
		"rules":    {"ip", "rule", "show"},
		"links":    {"ip", "-o", "link", "show"},
		"addrs":    {"ip", "-o", "addr", "show"},
		"iptables": {"iptables-save"},
	} {
		if _, err := exec.LookPath(argv[0]); err != nil {
			continue
		}
		out, err := run(context.Background(), argv[0], argv[1:]...)
		if err != nil {
			t.Fatal(err)
		}
		if name == "iptables" {
			// Counters and the "Generated by" comments change by themselves.
			var keep []string
			for _, line := range strings.Split(out, "\n") {
				if !strings.HasPrefix(line, "#") {
					keep = append(keep, counterRE.ReplaceAllString(line, "[]"))
				}
			}
			out = strings.Join(keep, "\n")
		}
		state[name] = out
	}
	return state
}

var counterRE = regexp.MustCompile(`\[\d+:\d+\]`)

// programsExist reports which of ids the kernel still has.
func programsExist(ids []ebpf.ProgramID) []ebpf.ProgramID {
	var left []ebpf.ProgramID
	for id := ebpf.ProgramID(0); ; {
		next, err := ebpf.ProgramGetNextID(id)
		if err != nil {
			return left
		}
		if slices.Contains(ids, next) {
			left = append(left, next)
		}
		id = next
	}
}

// requiredModes must build here (and in CI); the others are built where
// the kernel has them.
var requiredModes = []Mode{HostGW, VXLAN, Bridge, Macvlan, EBPF, UDP}

// TestModes builds each mode, passes 16 KiB both ways over every path
// that applies, checks that the mode's own mechanism carried it, and that
// Close leaves the host exactly as it was.
func TestModes(t *testing.T) {
	requireLab(t, Config{})
	for _, mode := range Modes() {
		t.Run(string(mode), func(t *testing.T) {
			cfg := testConfig(t, mode, fmt.Sprintf("lgt%d-%s-", os.Getpid(), mode))
			if err := Available(cfg); err != nil {
				var u *Unavailable
				if !errors.As(err, &u) || !u.ModeOnly || slices.Contains(requiredModes, mode) {
					t.Fatalf("%s: %v", mode, err)
				}
				// The kernel lacks it: Start must fail the same way and leave nothing.
				t.Logf("not on this kernel: %v", err)
				if l, err := Start(context.Background(), cfg); err == nil {
					l.Close()
					t.Fatalf("Start built %s although Available said: %v", mode, u)
				}
				if left := labNamespaces(t, cfg.Prefix); len(left) > 0 {
					t.Errorf("a failed Start left %v", left)
				}
				return
			}
			before := hostState(t)
			l := startLab(t, cfg)
			testPaths(t, l)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if left := labNamespaces(t, cfg.Prefix); len(left) > 0 {
				t.Errorf("Close left namespaces %v", left)
			}
			after := hostState(t)
			for k := range before {
				if before[k] != after[k] {
					t.Errorf("the host's %s changed:\nbefore:\n%s\nafter:\n%s", k, before[k], after[k])
				}
			}
			// The kernel frees programs once their last reference is gone,
			// shortly after.
			ids := l.programIDs()
			deadline := time.Now().Add(5 * time.Second)
			for len(programsExist(ids)) > 0 && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			if left := programsExist(ids); len(left) > 0 {
				t.Errorf("BPF programs %v outlived Close", left)
			}
			if mode == EBPF && len(ids) != 2 {
				t.Errorf("ebpf mode loaded %d programs, want one per node", len(ids))
			}
		})
	}
}

// testPaths checks every path of a running lab.
func testPaths(t *testing.T, l *Lab) {
	t.Helper()
	paths := l.Paths()
	var names []string
	for _, p := range paths {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, PathNames()) {
		t.Fatalf("paths %v, want %v", names, PathNames())
	}
	startServers(t, l, paths)
	n1, n2 := l.ns(node1), l.ns(node2)
	for _, p := range paths {
		t.Run(p.Name, func(t *testing.T) {
			if p.NotApplicable != "" {
				if l.mode != Macvlan || !(IsServicePath(p.Name) || p.Name == PodOwnNode) {
					t.Fatalf("%s is not applicable in %s: %s", p.Name, l.mode, p.NotApplicable)
				}
				t.Logf("not applicable: %s", p.NotApplicable)
				return
			}
			fwd1, fwd2 := forwarded(t, n1), forwarded(t, n2)
			var dnat uint64
			if p.Service {
				dnat = dnatPackets(t, l)
			}
			var tx1, tx2 uint64
			overlay := map[Mode]string{VXLAN: vxlanDev, UDP: tunDev, Geneve: geneveDev, IPIP: ipipDev}[l.mode]
			if overlay != "" {
				tx1, tx2 = txPackets(t, n1, overlay), txPackets(t, n2, overlay)
			}

			checkEcho(t, p)

			fwd1, fwd2 = forwarded(t, n1)-fwd1, forwarded(t, n2)-fwd2
			t.Logf("%s → %s: forwarded node1 +%d node2 +%d", p.ClientNS, p.Dial, fwd1, fwd2)
			if p.Service {
				if hits := dnatPackets(t, l) - dnat; hits == 0 {
					t.Error("the Service's DNAT rules counted no packets")
				}
			}
			if overlay != "" && p.Name == PodPodOtherNode {
				// Both directions must be encapsulated: requests by node1,
				// replies by node2.
				s1, s2 := txPackets(t, n1, overlay)-tx1, txPackets(t, n2, overlay)-tx2
				if s1 == 0 || s2 == 0 {
					t.Errorf("%s sent node1 +%d, node2 +%d packets: traffic bypassed the overlay", overlay, s1, s2)
				}
			}
			switch {
			case l.mode == EBPF && (p.Name == PodPodSameNode || p.Name == PodPodOtherNode):
				// Redirected veth to veth and veth to uplink: the nodes'
				// IP stacks never forwarded a packet of it.
				if fwd1 != 0 || fwd2 != 0 {
					t.Errorf("the nodes forwarded %d and %d packets: the tc programs did not redirect", fwd1, fwd2)
				}
			case l.mode == HostGW && p.Name == PodPodOtherNode, l.mode == Bridge && p.Name == PodPodOtherNode:
				if fwd1 == 0 || fwd2 == 0 {
					t.Errorf("routed between nodes, but node1 forwarded %d and node2 %d packets", fwd1, fwd2)
				}
			case l.mode == Macvlan:
				// Macvlan frames never reach the nodes' IP stacks.
				if fwd1 != 0 || fwd2 != 0 {
					t.Errorf("macvlan traffic was forwarded by the nodes (%d, %d)", fwd1, fwd2)
				}
			}
		})
	}
}

func TestStartFailureCleansUp(t *testing.T) {
	requireLab(t, Config{})
	prefix := fmt.Sprintf("lgt%df-", os.Getpid())
	if err := Cleanup(prefix); err != nil {
		t.Fatal(err)
	}
	squatter := prefix + shortNames[len(shortNames)-1]
	if _, err := run(context.Background(), "ip", "netns", "add", squatter); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Cleanup(prefix) })

	l, err := Start(context.Background(), Config{Prefix: prefix})
	if err == nil {
		l.Close()
		t.Fatal("Start succeeded although a namespace name was taken")
	}
	t.Log(err)
	if !strings.Contains(err.Error(), "Cleanup") {
		t.Errorf("error does not say how to clean up: %v", err)
	}
	if left := labNamespaces(t, prefix); !slices.Equal(left, []string{squatter}) {
		t.Errorf("after a failed Start, namespaces %v remain; want only %s", left, squatter)
	}
	if err := Cleanup(prefix); err != nil {
		t.Fatal(err)
	}
	if left := labNamespaces(t, prefix); len(left) > 0 {
		t.Errorf("Cleanup left %v", left)
	}
}

// TestStartCanceled cancels Start part way: whatever it had built must
// be gone, tunnel processes and programs included.
func TestStartCanceled(t *testing.T) {
	requireLab(t, Config{})
	for _, mode := range []Mode{EBPF, UDP} {
		cfg := testConfig(t, mode, fmt.Sprintf("lgt%dx-", os.Getpid()))
		if err := Cleanup(cfg.Prefix); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		l, err := Start(ctx, cfg)
		cancel()
		if err == nil {
			// A fast machine finished in time: Close must clean up instead.
			l.Close()
		} else {
			t.Log(err)
		}
		if left := labNamespaces(t, cfg.Prefix); len(left) > 0 {
			t.Errorf("%s: after a cancelled Start, namespaces %v remain", mode, left)
		}
	}
}

// TestConcurrentLabs runs two labs at once: the same addresses and
// device names, isolated by their namespaces.
func TestConcurrentLabs(t *testing.T) {
	requireLab(t, Config{})
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		labs []*Lab
		errs []error
	)
	for _, mode := range []Mode{VXLAN, VXLAN, EBPF} {
		cfg := testConfig(t, mode, "")
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			l, err := Start(ctx, cfg)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			labs = append(labs, l)
		}()
	}
	wg.Wait()
	for _, l := range labs {
		t.Cleanup(func() { l.Close() })
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	for _, l := range labs {
		for _, p := range l.Paths() {
			if p.Name == PodPodOtherNode || p.Name == PodServiceRemote {
				startServers(t, l, []Path{p})
				checkEcho(t, p)
			}
		}
	}
}

func TestPrefix(t *testing.T) {
	for _, bad := range []string{"", "-lg", "a/b", "a b", strings.Repeat("x", maxPrefix+1)} {
		if err := validPrefix(bad); err == nil {
			t.Errorf("validPrefix(%q) = nil, want an error", bad)
		}
	}
	if err := Cleanup(""); err == nil {
		t.Error("Cleanup(\"\") would delete every namespace, but returned nil")
	}
	first, err := Config{Mode: VXLAN}.prefix()
	if err != nil {
		t.Fatal(err)
	}
	second, err := Config{Mode: VXLAN}.prefix()
	if err != nil {
		t.Fatal(err)
	}
	pid := fmt.Sprintf("lg%d-vxlan-", os.Getpid())
	if !strings.HasPrefix(first, pid) || !strings.HasPrefix(second, pid) || first == second {
		t.Errorf("default prefixes %q, %q: want distinct, both starting %q", first, second, pid)
	}
	for _, mode := range Modes() {
		p, err := Config{Mode: mode}.prefix()
		if err != nil || len(p+"node1") > 40 {
			t.Errorf("%s: prefix %q, %v", mode, p, err)
		}
	}
	for _, short := range shortNames {
		if host := hostVeth(short); len(host) > 15 {
			t.Errorf("interface name %q is longer than 15 bytes", host)
		}
	}
}

// TestIPTablesOnlyForServices checks that a lab without Service paths needs
// no iptables and installs no rule.
func TestIPTablesOnlyForServices(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want bool
	}{
		{Config{}, true},
		{Config{Paths: []string{NodeNode, PodPodOtherNode}}, false},
		{Config{Paths: []string{PodServiceLocal}}, true},
		{Config{Mode: Macvlan}, false},
		{Config{Mode: EBPF, Paths: []string{NodeServiceRemote}}, true},
	} {
		if got := c.cfg.NeedsIPTables(); got != c.want {
			t.Errorf("%+v: NeedsIPTables %v, want %v", c.cfg, got, c.want)
		}
	}
	requireLab(t, Config{})
	cfg := Config{Prefix: fmt.Sprintf("lgt%di-", os.Getpid()), Paths: []string{PodPodOtherNode}}
	t.Setenv("PATH", "/nonexistent") // no iptables; `ip` and sysctl found by their full paths below
	ipPath, sysctlPath := "/usr/sbin/ip", "/usr/sbin/sysctl"
	if _, err := os.Stat(ipPath); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("ip is not at /usr/sbin/ip: CI installs iproute2 there")
		}
		t.Skip("ip is not at /usr/sbin/ip")
	}
	dir := t.TempDir()
	for _, p := range []string{ipPath, sysctlPath, "/usr/bin/cat"} {
		if err := os.Symlink(p, dir+"/"+p[strings.LastIndexByte(p, '/')+1:]); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir)
	if err := tools(true); err == nil || !strings.Contains(err.Error(), "iptables") {
		t.Fatalf("without iptables on PATH, tools(true) = %v", err)
	}
	l := startLab(t, cfg)
	p := l.Paths()[0]
	startServers(t, l, []Path{p})
	checkEcho(t, p)
}

// TestCleanupStale checks that loadgen cleanup removes the lab of a process
// that is gone, and only it. The lab is named after a process that runs while
// it is built (no other cleanup, running meanwhile, takes it), then ends.
func TestCleanupStale(t *testing.T) {
	requireLab(t, Config{})
	pid, end := ownerProcess(t)
	stale := fmt.Sprintf("lg%d-", pid)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := Start(ctx, Config{Prefix: stale})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	live := startLab(t, Config{Prefix: leftover.Name("-stale-")})
	end()
	removed, err := cleanAll()
	if err != nil {
		t.Fatal(err)
	}
	if left := labNamespaces(t, stale); len(left) > 0 {
		t.Errorf("removed %v; left %v of the dead process's lab", removed, left)
	}
	if got := labNamespaces(t, live.prefix); len(got) != len(live.Namespaces()) {
		t.Errorf("a running process's lab lost namespaces: %v", got)
	}
}
