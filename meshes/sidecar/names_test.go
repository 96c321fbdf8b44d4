package sidecar

import (
	"slices"
	"testing"

	"loadgen/internal/sidecarnames"
)

// The profiles and placements are internal/sidecarnames' lists, the ones
// the sweep checks a path's against: each of its names parses here, in its
// order.
func TestNamesAreSidecarnames(t *testing.T) {
	for _, tc := range []struct {
		list  string
		names []string
		parse func(string) (string, error)
	}{
		{"proxies", sidecarnames.Proxies(), func(s string) (string, error) { p, err := ParseProxy(s); return string(p), err }},
		{"placements", sidecarnames.Placements(), func(s string) (string, error) { p, err := ParsePlacement(s); return string(p), err }},
	} {
		for _, n := range tc.names {
			if got, err := tc.parse(n); err != nil || got != n {
				t.Errorf("%s: %q parses as %q, %v", tc.list, n, got, err)
			}
		}
	}
	// the named constants are the lists, in their order
	if got := []Proxy{Nginx, HAProxy, Caddy, Envoy}; !slices.Equal(got, Proxies) {
		t.Errorf("the Proxy constants %q, Proxies %q", got, Proxies)
	}
	if got := []Placement{None, ServerOnly, ClientOnly, Both}; !slices.Equal(got, Placements) {
		t.Errorf("the Placement constants %q, Placements %q", got, Placements)
	}
	for i, p := range Proxies {
		if string(p) != sidecarnames.Proxies()[i] {
			t.Errorf("Proxies[%d] = %q, internal/sidecarnames' %q", i, p, sidecarnames.Proxies()[i])
		}
	}
	for i, p := range Placements {
		if string(p) != sidecarnames.Placements()[i] {
			t.Errorf("Placements[%d] = %q, internal/sidecarnames' %q", i, p, sidecarnames.Placements()[i])
		}
	}
	if len(Proxies) != len(sidecarnames.Proxies()) || len(Placements) != len(sidecarnames.Placements()) {
		t.Errorf("%d proxies, %d placements; internal/sidecarnames has %d, %d", len(Proxies), len(Placements), len(sidecarnames.Proxies()), len(sidecarnames.Placements()))
	}
}

// Workers is what a sweep records for a sidecar path's proxies.
func TestSidecarWorkers(t *testing.T) {
	for _, tc := range []struct{ asked, want int }{{0, 2}, {1, 1}, {4, 4}} {
		if got := (&Sidecar{cfg: Config{Workers: tc.asked}}).Workers(); got != tc.want {
			t.Errorf("Workers %d: Workers() = %d, want %d", tc.asked, got, tc.want)
		}
	}
}
