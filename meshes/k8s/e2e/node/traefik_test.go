package node

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

// TestTraefikHTTP3 checks that the node's Traefik serves HTTP/3 on its
// websecure entry point (Traefik v3's static flags, no experimental
// switch) and that QUIC can reach it: UDP 443 in its pod and in its
// Service, beside TCP 443, each port named (the Service's UDP port aims
// at the container's UDP port by name), no (port, protocol) pair twice.
func TestTraefikHTTP3(t *testing.T) {
	d := traefikDeployment("traefik:test", "10.96.0.10")
	c := d.Spec.Template.Spec.Containers[0]
	for _, want := range []string{"--entryPoints.websecure.address=:443", "--entryPoints.websecure.http.tls=true",
		"--entryPoints.websecure.http3=true", "--entryPoints.websecure.http3.advertisedPort=443"} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("Traefik's args lack %s: %q", want, c.Args)
		}
	}
	byName := map[string]corev1.ContainerPort{}
	for _, p := range c.Ports {
		if _, dup := byName[p.Name]; dup || p.Name == "" || len(p.Name) > 15 {
			t.Errorf("container port %+v: a name of its own of at most 15 characters", p)
		}
		byName[p.Name] = p
	}
	type key struct {
		port  int32
		proto corev1.Protocol
	}
	seen, names := map[key]bool{}, map[string]bool{}
	udp := false
	for _, p := range traefikService().Spec.Ports {
		k := key{p.Port, p.Protocol}
		if seen[k] || p.Name == "" || names[p.Name] {
			t.Errorf("Service port %+v: the API server refuses a (port, protocol) pair twice, and a port without a name of its own", p)
		}
		seen[k], names[p.Name] = true, true
		cp, ok := byName[p.TargetPort.StrVal]
		if !ok || cp.Protocol != p.Protocol || cp.ContainerPort != p.Port {
			t.Errorf("Service port %+v aims at %+v, not a container port of its protocol and number", p, cp)
		}
		udp = udp || p.Port == 443 && p.Protocol == corev1.ProtocolUDP
	}
	if !udp || !seen[key{443, corev1.ProtocolTCP}] {
		t.Errorf("Traefik's Service lacks UDP 443 beside TCP 443: %+v", traefikService().Spec.Ports)
	}
}
