package sidecar

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"loadgen/meshes/caddy"
	"loadgen/meshes/haproxy"
	"loadgen/meshes/nginxingress"
	"loadgen/meshes/proxyproc"
	"loadgen/meshes/proxytest"
	"loadgen/results/cost"
	"loadgen/targets/httpbin"
)

func mustAddrPort(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

// Two pods joined by a veth pair, in 198.18.0.0/15.
const (
	clientIP = "198.18.210.1"
	serverIP = "198.18.210.2"
	appPort  = 8080
	requests = 100
)

// pods makes the client and server namespaces, removed when t ends.
func pods(t *testing.T) (client, server string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("sidecar tests need root (network namespaces, iptables)")
		}
		t.Skip("needs root: network namespaces, iptables")
	}
	for _, bin := range []string{"ip", "iptables-restore", "iptables-save"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not installed: .ci/run must install iproute2 and iptables", bin)
			}
			t.Skip(err)
		}
	}
	id := fmt.Sprintf("lgt%dsc", os.Getpid()) // lab.TestNSPrefix: a test run after a killed one removes it
	client, server = id+"c", id+"s"
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	t.Cleanup(func() {
		exec.Command("ip", "netns", "del", client).Run()
		exec.Command("ip", "netns", "del", server).Run()
	})
	ip("netns", "add", client)
	ip("netns", "add", server)
	ip("link", "add", "v"+client, "netns", client, "type", "veth", "peer", "name", "v"+server, "netns", server)
	ip("-n", client, "addr", "add", clientIP+"/24", "dev", "v"+client)
	ip("-n", server, "addr", "add", serverIP+"/24", "dev", "v"+server)
	for _, ns := range []string{client, server} {
		ip("-n", ns, "link", "set", "lo", "up")
		ip("-n", ns, "link", "set", "v"+ns, "up")
	}
	return client, server
}

// hostTables is the host's nat and filter tables, without the comments
// and counters that change by themselves.
func hostTables(t *testing.T) string {
	t.Helper()
	counters := regexp.MustCompile(`\[\d+:\d+\]`)
	var b strings.Builder
	for _, table := range []string{"nat", "filter"} {
		out, err := Save(context.Background(), "", table)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(out, "\n") {
			if !strings.HasPrefix(line, "#") {
				b.WriteString(counters.ReplaceAllString(line, "[0:0]") + "\n")
			}
		}
	}
	return b.String()
}

// startTarget runs httpbin in the server pod on 0.0.0.0:8080 (Caddy's
// inbound side reaches it on 127.0.0.1).
func startTarget(t *testing.T, ns string) *httpbin.Server {
	t.Helper()
	srv, err := httpbin.New(httpbin.Config{Addr: fmt.Sprintf("0.0.0.0:%d", appPort)})
	if err != nil {
		t.Fatal(err)
	}
	if err := proxyproc.In(ns, srv.Start); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// clientIn is an HTTP client whose connections are made in ns: the
// client pod's load generator. Its connections close when t ends.
func clientIn(t *testing.T, ns string) *http.Client {
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			return proxyproc.DialContext(ctx, ns, addr)
		},
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Timeout: 10 * time.Second, Transport: tr}
}

var profiles = []struct {
	proxy     Proxy
	comm      string
	available func() (string, error)
	hash      func([]byte) string
}{
	{Nginx, "nginx", nginxingress.Available, proxytest.SHA1},
	{HAProxy, "haproxy", haproxy.Available, proxytest.SHA256},
	{Caddy, "caddy", caddy.Available, proxytest.SHA256},
}

// TestPlacements checks that for every real profile and placement, a client
// in the client pod sends real HTTP to the server pod's IP; the capture rules
// send it through the sidecars, which count every request and burn CPU
// doing it; the target serves exactly what the client sent; in both with
// mTLS the server sidecar tells the target the client's certificate; and
// Close leaves no process and no rule. The host's tables never change.
func TestPlacements(t *testing.T) {
	clientNS, serverNS := pods(t)
	host := hostTables(t)
	target := startTarget(t, serverNS)
	serverAddr := netip.AddrPortFrom(netip.MustParseAddr(serverIP), appPort)
	url := "http://" + serverAddr.String()

	t.Run("none", func(t *testing.T) {
		http := clientIn(t, clientNS)
		s, err := Start(context.Background(), Config{Placement: None, ClientNS: clientNS, ServerNS: serverNS, ServerAddr: serverAddr})
		if err != nil {
			t.Fatal(err)
		}
		before := target.Served()
		for range requests {
			proxytest.Get(t, http, url+"/bytes/1024")
		}
		if got := target.Served() - before; got != requests {
			t.Errorf("target served %d, client sent %d", got, requests)
		}
		if pids, _ := s.Pids(); len(pids) != 0 {
			t.Errorf("none has processes %v", pids)
		}
		checkChains(t, map[string]bool{clientNS: false, serverNS: false})
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	for _, prof := range profiles {
		for _, tc := range []struct {
			placement Placement
			mtls      bool
		}{{ServerOnly, false}, {ClientOnly, false}, {Both, false}, {Both, true}} {
			cfg := Config{Proxy: prof.proxy, Placement: tc.placement, MTLS: tc.mtls, ClientNS: clientNS, ServerNS: serverNS,
				ServerAddr: serverAddr, ClientIP: netip.MustParseAddr(clientIP), Count: true}
			t.Run(cfg.String(), func(t *testing.T) {
				proxytest.NeedBinary(t, prof.available)
				s, err := Start(context.Background(), cfg)
				// A new client: a connection kept alive from before the
				// rules were written would bypass them (conntrack).
				http := clientIn(t, clientNS)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				clientSide, serverSide := tc.placement != ServerOnly, tc.placement != ClientOnly
				checkChains(t, map[string]bool{clientNS: clientSide, serverNS: serverSide})
				pids, err := s.Pids()
				if err != nil || len(pids) == 0 {
					t.Fatalf("Pids() = %v, %v", pids, err)
				}
				for _, pid := range pids {
					if uid := procUID(t, pid); uid != 1337 {
						t.Errorf("sidecar pid %d runs as UID %d, want 1337", pid, uid)
					}
				}
				sampler, err := cost.Start(cost.Selector{PIDs: pids}, 20*time.Millisecond)
				if err != nil {
					t.Fatal(err)
				}
				before := target.Served()
				proxytest.Get(t, http, url+"/bytes/1048576")
				sent := 1 + proxytest.Load(t, http, url+"/bytes/1024", requests, pids)
				usage := sampler.Stop()
				if got := target.Served() - before; got != uint64(sent) {
					t.Errorf("target served %d, client sent %d", got, sent)
				}
				// A pod without a sidecar counts nothing; with one, every
				// request went through it.
				proxytest.WaitCount(t, "the client sidecar", func() (uint64, error) { c, _, err := s.Requests(); return c, err }, count(clientSide, sent))
				proxytest.WaitCount(t, "the server sidecar", func() (uint64, error) { _, sv, err := s.Requests(); return sv, err }, count(serverSide, sent))
				if usage.CPUSeconds <= 0 {
					t.Errorf("the sidecars %v used no CPU (%+v)", pids, usage)
				}
				if tc.mtls {
					checkMTLS(t, http, url, prof.hash(s.ClientCert().Raw))
				}
				if err := s.Err(); err != nil {
					t.Error(err)
				}
				if err := s.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
				for _, pid := range pids {
					if proxyproc.Alive(pid, prof.comm) {
						t.Errorf("pid %d still running after Close", pid)
					}
				}
				checkChains(t, map[string]bool{clientNS: false, serverNS: false})
			})
		}
	}
	if after := hostTables(t); after != host {
		t.Errorf("the host's iptables changed:\nbefore:\n%s\nafter:\n%s", host, after)
	}
}

func count(placed bool, sent int) uint64 {
	if placed {
		return uint64(sent)
	}
	return 0
}

// checkMTLS checks that the target sees the X-Forwarded-Client-Cert the
// server sidecar sets once it has verified the client sidecar's certificate.
func checkMTLS(t *testing.T, c *http.Client, url, hash string) {
	t.Helper()
	resp, err := c.Get(url + "/headers")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "Hash="+hash) {
		t.Errorf("the target did not see the client's certificate (Hash=%s) in X-Forwarded-Client-Cert: %s", hash, body)
	}
}

// checkChains checks that the capture chains are in a pod exactly when want
// says.
func checkChains(t *testing.T, want map[string]bool) {
	t.Helper()
	for ns, captured := range want {
		found, err := ChainsIn(context.Background(), ns)
		if err != nil {
			t.Fatal(err)
		}
		if captured && len(found) != len(chains) || !captured && len(found) != 0 {
			t.Errorf("pod %s has capture chains %v, want them: %v", ns, found, captured)
		}
	}
}

func procUID(t *testing.T, pid int) int {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(fmt.Sprintf("/proc/%d", pid), &st); err != nil {
		t.Fatal(err)
	}
	return int(st.Uid)
}

// TestProxyDies checks that a sidecar killed mid-step is reported with its
// last log lines, and Close still removes the rest, leaving no rule behind.
func TestProxyDies(t *testing.T) {
	clientNS, serverNS := pods(t)
	proxytest.NeedBinary(t, haproxy.Available)
	startTarget(t, serverNS)
	s, err := Start(context.Background(), Config{Proxy: HAProxy, Placement: Both, ClientNS: clientNS, ServerNS: serverNS,
		ServerAddr: netip.AddrPortFrom(netip.MustParseAddr(serverIP), appPort)})
	if err != nil {
		t.Fatal(err)
	}
	pids, _ := s.server.PIDs()
	for _, pid := range pids {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	<-s.server.Done()
	if err := s.Err(); err == nil || !strings.Contains(err.Error(), "server's haproxy died") {
		t.Errorf("Err() = %v", err)
	}
	err = s.Close()
	if err == nil || !strings.Contains(err.Error(), "had exited before Close") {
		t.Errorf("Close() = %v, want the death reported", err)
	}
	checkChains(t, map[string]bool{clientNS: false, serverNS: false})
}

// TestStartFailureCleansUp checks that a proxy that cannot start (its binary
// missing) leaves neither rules nor the other sidecar.
func TestStartFailureCleansUp(t *testing.T) {
	clientNS, serverNS := pods(t)
	t.Setenv("PATH", "/usr/bin:/bin") // no envoy here
	if _, err := exec.LookPath("envoy"); err == nil {
		t.Skip("an envoy binary is installed")
	}
	_, err := Start(context.Background(), Config{Proxy: Envoy, Placement: Both, ClientNS: clientNS, ServerNS: serverNS,
		ServerAddr: netip.AddrPortFrom(netip.MustParseAddr(serverIP), appPort)})
	if err == nil || !strings.Contains(err.Error(), "no Envoy package exists") {
		t.Fatalf("Start with envoy: %v", err)
	}
	checkChains(t, map[string]bool{clientNS: false, serverNS: false})
}
