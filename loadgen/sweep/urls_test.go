package sweep

import (
	"slices"
	"testing"
)

// URLs are what a sweep's proxy notice checks: every path's address in
// the paths' order, none for a path whose URL is still to be filled.
func TestSpecURLs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		paths []Path
		want  []string
	}{
		{"none", nil, nil},
		{"in order", []Path{{Name: "b", URL: "http://127.0.0.1:8081"}, {Name: "a", URL: "http://127.0.0.1:8080"}},
			[]string{"http://127.0.0.1:8081", "http://127.0.0.1:8080"}},
		{"a sidecar path has none yet", []Path{{Name: "direct", URL: "http://127.0.0.1:8080"}, {Name: "nginx", Sidecar: &Sidecar{Proxy: "nginx", Placement: "both"}}},
			[]string{"http://127.0.0.1:8080"}},
		{"only paths to fill", []Path{{Name: "nginx", Sidecar: &Sidecar{Proxy: "nginx"}}}, nil},
	} {
		if got := (&Spec{Paths: tc.paths}).URLs(); !slices.Equal(got, tc.want) {
			t.Errorf("%s: URLs() = %q, want %q", tc.name, got, tc.want)
		}
	}
}
