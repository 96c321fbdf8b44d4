package sweep

import "testing"

func TestLabel(t *testing.T) {
	r := Rung{Connections: 4, Threads: 4}
	for _, tc := range []struct {
		name, got, want string
	}{
		{"a step", Step{Path: "nginx", Rung: r, Payload: 1024, Rate: 1600, Repeat: 2}.Label(), "nginx c4t4 1KiB"},
		{"bytes", Step{Path: "baseline", Rung: Rung{Connections: 16, Threads: 2}, Payload: 100}.Label(), "baseline c16t2 100B"},
		{"a search", FindMaxSearch{Path: "envoy", Rung: r, Payload: 1 << 20}.Label(), "envoy c4t4 1MiB"},
		{"a maximum", Max{Path: "istio", Rung: "c1t1", Payload: 0}.Label(), "istio c1t1 0B"},
		{"plain values", Label("caddy", "c8t2", 2048), "caddy c8t2 2KiB"},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}
