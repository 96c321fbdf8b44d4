package k8s

import (
	"slices"
	"testing"
)

func TestClasses(t *testing.T) {
	for _, c := range []struct {
		mesh string
		want []string
	}{
		{MeshGateway, []string{"nginx", "eg", "istio", "cilium", "traefik", ClassLattice}},
		{MeshIngress, []string{"traefik", "haproxy", "contour"}},
		{MeshIngressNginx, []string{"nginx"}},
		// Every mesh's, each once, in the order of the meshes.
		{"", []string{"nginx", "eg", "istio", "cilium", "traefik", ClassLattice, "haproxy", "contour"}},
		{MeshIstio, []string{"nginx", "eg", "istio", "cilium", "traefik", ClassLattice, "haproxy", "contour"}},
	} {
		if got := Classes(c.mesh); !slices.Equal(got, c.want) {
			t.Errorf("Classes(%q) = %v, want %v", c.mesh, got, c.want)
		}
	}
	// A caller's change to its list does not change the next answer.
	Classes(MeshIngress)[0] = "changed"
	if Classes(MeshIngress)[0] != "traefik" {
		t.Error("Classes hands out its own list")
	}
}
