package sidecarnames

import (
	"slices"
	"testing"
)

func TestLists(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want []string
	}{
		{"Proxies", Proxies(), []string{"nginx", "haproxy", "caddy", "envoy"}},
		{"Placements", Placements(), []string{"none", "serveronly", "clientonly", "both"}},
		{"ClusterProxies", ClusterProxies(), []string{"nginx", "haproxy", "caddy"}},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s() = %q, want %q", tc.name, tc.got, tc.want)
		}
	}
	// every cluster proxy is a local profile too
	for _, p := range ClusterProxies() {
		if !slices.Contains(Proxies(), p) {
			t.Errorf("cluster proxy %q is no local profile", p)
		}
	}
	// a caller's change to a returned list is its own
	Proxies()[0] = "x"
	if Proxies()[0] != Nginx {
		t.Error("Proxies() shares its slice")
	}
}
