package main

import (
	"slices"
	"testing"

	"loadgen/loadgen/study"
	"loadgen/loadgen/sweep"
	"loadgen/meshes/k8s"
	"loadgen/meshes/sidecar"
)

// The sweep and the study name the sidecar profiles, placements and the
// cluster's sidecar mesh's proxies without importing meshes (the layer
// rule); their lists must be the meshes' own, which this package, free to
// import both, holds them to.
func TestSidecarNamesAgree(t *testing.T) {
	var proxies, placements []string
	for _, p := range sidecar.Proxies {
		proxies = append(proxies, string(p))
	}
	for _, p := range sidecar.Placements {
		placements = append(placements, string(p))
	}
	if !slices.Equal(sweep.SidecarProxies, proxies) {
		t.Errorf("sweep.SidecarProxies %v, meshes/sidecar's %v", sweep.SidecarProxies, proxies)
	}
	if !slices.Equal(sweep.SidecarPlacements, placements) {
		t.Errorf("sweep.SidecarPlacements %v, meshes/sidecar's %v", sweep.SidecarPlacements, placements)
	}
	if !slices.Equal(study.SidecarProxies, k8s.SidecarProxies) {
		t.Errorf("study.SidecarProxies %v, meshes/k8s's %v", study.SidecarProxies, k8s.SidecarProxies)
	}
}
