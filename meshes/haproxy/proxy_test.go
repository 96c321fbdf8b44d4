package haproxy

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"loadgen/meshes/layout"
	"loadgen/meshes/proxytest"
)

func TestConformance(t *testing.T) {
	needHaproxy(t)
	proxytest.Run(t, proxytest.Profile{
		Name: "haproxy",
		Start: func(ctx context.Context, s layout.Sidecar) (proxytest.Proxy, error) {
			return Start(ctx, Config{Sidecar: s})
		},
		Hash: proxytest.SHA256,
	})
}

// TestStartFailsWithLog checks that a haproxy that cannot bind its port fails
// Start with haproxy's own words, and leaves no run directory.
func TestStartFailsWithLog(t *testing.T) {
	needHaproxy(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	// 192.0.2.1 (TEST-NET-1) is no address of this machine: bind fails.
	s := layout.Loopback(15006, 8080, 15001, 8081, 15000)
	s.Inbound = netip.AddrPortFrom(netip.MustParseAddr("192.0.2.1"), 15006)
	_, err := Start(context.Background(), Config{Sidecar: s})
	if err == nil || !strings.Contains(err.Error(), "192.0.2.1:15006") || !strings.Contains(err.Error(), "cannot bind socket") {
		t.Fatalf("Start: %v, want haproxy's bind error", err)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("failed Start left %s", filepath.Join(tmp, entries[0].Name()))
	}
}

func TestMissingBinary(t *testing.T) {
	_, err := Start(context.Background(), Config{Sidecar: layout.Loopback(1, 2, 3, 4, 5), Binary: "/nonexistent/haproxy"})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/haproxy") {
		t.Errorf("Start: %v", err)
	}
}
