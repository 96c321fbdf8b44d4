package proxyproc

import (
	"strings"
	"testing"
)

func TestFindSaysWhatToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := Find("", "haproxy", "/nonexistent/haproxy", "apt-get install haproxy")
	if err == nil || err.Error() != "haproxy not found on PATH or at /nonexistent/haproxy: apt-get install haproxy" {
		t.Errorf("Find: %v", err)
	}
	_, err = Find("/nonexistent/x", "caddy", "", "apt-get install caddy")
	if err == nil || !strings.Contains(err.Error(), `caddy binary "/nonexistent/x"`) {
		t.Errorf("Find with a binary: %v", err)
	}
}

func TestFreePortsDistinct(t *testing.T) {
	ports, err := FreePorts("127.0.0.1", 5)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint16]bool{}
	for _, p := range ports {
		if p == 0 || seen[p] {
			t.Fatalf("ports %v", ports)
		}
		seen[p] = true
	}
}
