//go:build linux

package lab

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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
func requireLab(t *testing.T) {
	t.Helper()
	if err := Available(); err != nil {
		if os.Getenv("CI") == "" {
			t.Skip(err)
		}
		t.Fatal(err)
	}
}

// startLab starts a lab with a prefix unique to this process and test,
// and closes it when the test ends.
func startLab(t *testing.T, prefix string) *Lab {
	t.Helper()
	if err := Cleanup(prefix); err != nil { // a crashed earlier run
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := Start(ctx, Config{Prefix: prefix})
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
// has to be created there: it stays in that namespace for its lifetime,
// so the goroutine's thread goes back to the test's namespace at once.
func dialIn(ns, addr string) (net.Conn, error) {
	type result struct {
		c   net.Conn
		err error
	}
	ch := make(chan result, 1)
	go func() {
		// setns changes the calling thread only: pin this goroutine to
		// it. If we cannot switch back we return without unlocking, so
		// the runtime ends the thread instead of reusing it in ns.
		runtime.LockOSThread()
		orig, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: err}
			return
		}
		defer orig.Close()
		target, err := os.Open(NetnsFile(ns))
		if err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: err}
			return
		}
		defer target.Close()
		if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- result{err: fmt.Errorf("setns %s: %w", ns, err)}
			return
		}
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if rerr := unix.Setns(int(orig.Fd()), unix.CLONE_NEWNET); rerr != nil {
			if c != nil {
				c.Close()
			}
			ch <- result{err: fmt.Errorf("setns back: %w", rerr)}
			return
		}
		runtime.UnlockOSThread()
		ch <- result{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

// checkEcho sends a few KB over a connection dialed from the path's
// client namespace and checks they come back unchanged.
func checkEcho(t *testing.T, p Path) {
	t.Helper()
	addr := net.JoinHostPort(p.DialAddr, strconv.Itoa(ServicePort))
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

// txPackets reads a device's transmitted-packet counter from
// /proc/net/dev inside ns.
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

// dnatPackets returns the packet counter of node1's Service DNAT rule.
func dnatPackets(t *testing.T, l *Lab) uint64 {
	t.Helper()
	out, err := run(context.Background(), "ip", "netns", "exec", l.ns(node1),
		"iptables", "-w", "-t", "nat", "-L", "PREROUTING", "-v", "-n", "-x")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "DNAT") && strings.Contains(line, clusterIP) {
			n, err := strconv.ParseUint(strings.Fields(line)[0], 10, 64)
			if err != nil {
				t.Fatalf("DNAT rule line %q: %v", line, err)
			}
			return n
		}
	}
	t.Fatalf("no DNAT rule for %s in node1's PREROUTING:\n%s", clusterIP, out)
	return 0
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
// of the paths: pod-pod-host-gw and pod-service share pod2a's.
func startServers(t *testing.T, l *Lab, paths []Path) {
	t.Helper()
	started := map[[2]string]bool{}
	for _, p := range paths {
		key := [2]string{p.ServerNS, p.ListenAddr}
		if !started[key] {
			started[key] = true
			startEcho(t, l, p.ServerNS, net.JoinHostPort(p.ListenAddr, strconv.Itoa(ServicePort)))
		}
	}
}

func TestLab(t *testing.T) {
	requireLab(t)
	prefix := fmt.Sprintf("lgt%d-", os.Getpid())
	l := startLab(t, prefix)

	got := labNamespaces(t, prefix)
	want := l.Namespaces()
	slices.Sort(got)
	slices.Sort(want)
	if len(want) != len(shortNames) || !slices.Equal(got, want) {
		t.Fatalf("namespaces: ip netns list has %v, lab reports %v", got, want)
	}

	paths := l.Paths()
	var names []string
	for _, p := range paths {
		names = append(names, p.Name)
	}
	wantNames := []string{"loopback", "node-node", "pod-own-node", "pod-pod-same-node",
		"pod-pod-host-gw", "pod-pod-vxlan", "pod-pod-macvlan", "pod-service"}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("paths %v, want %v", names, wantNames)
	}
	if !paths[0].Baseline {
		t.Error("loopback is not marked Baseline")
	}

	startServers(t, l, paths)
	for _, p := range paths {
		t.Run(p.Name, func(t *testing.T) {
			n1Before := txPackets(t, l.ns(node1), vxlanDev)
			n2Before := txPackets(t, l.ns(node2), vxlanDev)
			dnatBefore := dnatPackets(t, l)

			checkEcho(t, p)

			n1Sent := txPackets(t, l.ns(node1), vxlanDev) - n1Before
			n2Sent := txPackets(t, l.ns(node2), vxlanDev) - n2Before
			dnatHits := dnatPackets(t, l) - dnatBefore
			t.Logf("%s → %s:%d: vxlan0 tx node1 +%d node2 +%d, DNAT +%d",
				p.ClientNS, p.DialAddr, ServicePort, n1Sent, n2Sent, dnatHits)
			switch p.Name {
			case "pod-pod-vxlan":
				// Both directions must be encapsulated: requests by node1,
				// replies by node2.
				if n1Sent == 0 || n2Sent == 0 {
					t.Errorf("vxlan0 sent node1 +%d, node2 +%d packets: traffic bypassed the overlay", n1Sent, n2Sent)
				}
			case "pod-pod-host-gw":
				// The same nodes, but routed: the overlay must stay idle.
				if n1Sent != 0 || n2Sent != 0 {
					t.Errorf("host-gw traffic went through vxlan0 (node1 +%d, node2 +%d)", n1Sent, n2Sent)
				}
			case "pod-service":
				if dnatHits == 0 {
					t.Error("the Service's DNAT rule counted no packets")
				}
			}
		})
	}
}

func TestCloseRemovesEverything(t *testing.T) {
	requireLab(t)
	prefix := fmt.Sprintf("lgt%dc-", os.Getpid())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := Start(ctx, Config{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if left := labNamespaces(t, prefix); len(left) > 0 {
		t.Fatalf("Close left namespaces %v", left)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// TestConcurrentLabs runs two labs at once: the same addresses and
// device names, isolated by their namespaces.
func TestConcurrentLabs(t *testing.T) {
	requireLab(t)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		labs []*Lab
		errs []error
	)
	for _, suffix := range []string{"a", "b"} {
		prefix := fmt.Sprintf("lgt%d%s-", os.Getpid(), suffix)
		if err := Cleanup(prefix); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			l, err := Start(ctx, Config{Prefix: prefix})
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
			if p.Name == "pod-pod-vxlan" || p.Name == "pod-service" {
				startServers(t, l, []Path{p})
				checkEcho(t, p)
			}
		}
	}
}

// TestStartFailureCleansUp makes Start fail half way, on the last
// namespace, and checks it removed the eight it had created but not the
// one it did not own.
func TestStartFailureCleansUp(t *testing.T) {
	requireLab(t)
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
// be gone.
func TestStartCanceled(t *testing.T) {
	requireLab(t)
	prefix := fmt.Sprintf("lgt%dx-", os.Getpid())
	if err := Cleanup(prefix); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Cleanup(prefix) })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	l, err := Start(ctx, Config{Prefix: prefix})
	if err == nil {
		// A fast machine finished in time; nothing to check.
		l.Close()
		t.Skip("Start finished before its context expired")
	}
	t.Log(err)
	if left := labNamespaces(t, prefix); len(left) > 0 {
		t.Errorf("after a cancelled Start, namespaces %v remain", left)
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
	first, err := Config{}.prefix()
	if err != nil {
		t.Fatal(err)
	}
	second, err := Config{}.prefix()
	if err != nil {
		t.Fatal(err)
	}
	pid := fmt.Sprintf("lg%d-", os.Getpid())
	if !strings.HasPrefix(first, pid) || !strings.HasPrefix(second, pid) || first == second {
		t.Errorf("default prefixes %q, %q: want distinct, both starting %q", first, second, pid)
	}
	for _, short := range shortNames {
		if host := "veth-" + short; len(host) > 15 {
			t.Errorf("interface name %q is longer than 15 bytes", host)
		}
	}
}

// TestCleanupStale removes the lab of a process that is gone, and only it.
func TestCleanupStale(t *testing.T) {
	requireLab(t)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := fmt.Sprintf("lg%d-", dead.Process.Pid)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := Start(ctx, Config{Prefix: stale})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	live := startLab(t, fmt.Sprintf("lg%d-stale-", os.Getpid()))
	removed, err := CleanupStale()
	if err != nil {
		t.Fatal(err)
	}
	if left := labNamespaces(t, stale); len(left) > 0 || len(removed) != len(l.Namespaces()) {
		t.Errorf("removed %v; left %v of the dead process's lab", removed, left)
	}
	if got := labNamespaces(t, live.prefix); len(got) != len(live.Namespaces()) {
		t.Errorf("a running process's lab lost namespaces: %v", got)
	}
}
