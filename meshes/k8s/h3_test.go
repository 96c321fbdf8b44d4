package k8s

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestTargetServesH3 checks that every target (the first, a hop's, an
// ambient mesh's direct one) serves HTTP/3 on UDP 8443 beside HTTPS on
// TCP 8443, in one `loadgen serve httpbin --tls` (which serves HTTP/3 on
// the UDP port of its TLS port's number), and that its Service exposes
// both. Kubernetes takes one number twice in a Service when the
// protocols differ: its validation refuses a duplicate (protocol, port)
// pair and a duplicate name, and wants a name on every port of a
// Service of several, which the test checks as the API server would.
func TestTargetServesH3(t *testing.T) {
	for _, o := range []Options{{Mesh: MeshIngress, Class: "traefik"}, {Mesh: MeshIstioAmbient}, {Mesh: MeshLinkerd, Hops: 2}} {
		r, err := Render(o, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := readRendering(t, r.Objects)
		o, _ = o.WithDefaults()
		for _, name := range o.TargetNames() {
			svc, ok := got.services[name]
			if !ok {
				t.Fatalf("%s: no Service %s", o.Mesh, name)
			}
			type key struct {
				port  int32
				proto corev1.Protocol
			}
			pairs, names := map[key]string{}, map[string]bool{}
			for _, p := range svc.Spec.Ports {
				k := key{p.Port, p.Protocol}
				if pairs[k] != "" {
					t.Errorf("%s: Service %s has %d/%s twice (%s, %s): the API server refuses it", o.Mesh, name, p.Port, p.Protocol, pairs[k], p.Name)
				}
				if p.Name == "" || names[p.Name] {
					t.Errorf("%s: Service %s: port %d/%s has no name of its own (%q)", o.Mesh, name, p.Port, p.Protocol, p.Name)
				}
				pairs[k], names[p.Name] = p.Name, true
			}
			if pairs[key{PortHTTPSDirect, corev1.ProtocolUDP}] != H3PortName || pairs[key{PortHTTPSDirect, corev1.ProtocolTCP}] == "" {
				t.Errorf("%s: Service %s does not expose UDP %d (%s) beside TCP %d: %+v", o.Mesh, name, PortHTTPSDirect, H3PortName, PortHTTPSDirect, svc.Spec.Ports)
			}
			var server *corev1.Container
			pod := got.deployments[name].Spec.Template.Spec
			for i, c := range pod.Containers {
				for _, p := range c.Ports {
					if p.ContainerPort == PortHTTPSDirect && p.Protocol == corev1.ProtocolUDP {
						server = &pod.Containers[i]
					}
				}
			}
			if server == nil {
				t.Fatalf("%s: no container of %s has UDP port %d", o.Mesh, name, PortHTTPSDirect)
			}
			args := strings.Join(server.Args, " ")
			if !strings.HasPrefix(args, "serve httpbin --addr 0.0.0.0:8443 --tls") {
				t.Errorf("%s: %s's HTTP/3 server runs %q, not httpbin with TLS on 8443", o.Mesh, name, args)
			}
			if p := server.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Scheme != corev1.URISchemeHTTPS || p.HTTPGet.Port.IntVal != PortHTTPSDirect {
				t.Errorf("%s: %s's HTTP/3 server's readiness probe is not HTTPS on %d: %+v", o.Mesh, name, PortHTTPSDirect, p)
			}
		}
	}
}

// TestH3Paths checks where a step of -p h3 goes: the direct path's 8081
// to the target's UDP 8443 (the ambient mesh's direct target), and the
// mesh path behind an ingress to the controller's 443, with the
// Ingress's host as :authority and SNI.
func TestH3Paths(t *testing.T) {
	l := Load{Protocol: ProtocolH3, Duration: time.Second}
	for _, tc := range []struct {
		o    Options
		url  string
		want string
	}{
		{Options{Mesh: MeshIngress, Class: "traefik", Namespace: "b"}, "https://target:8081", "https://loadgen-target.b.svc.cluster.local:8443"},
		{Options{Mesh: MeshIngress, Class: "traefik", Namespace: "b"}, "https://target:8443", "https://loadgen-target.b.svc.cluster.local:8443"},
		{Options{Mesh: MeshIstioAmbient, Namespace: "b"}, "https://target:8081", "https://loadgen-target-direct.b.svc.cluster.local:8443"},
		{Options{Mesh: MeshIngress, Class: "traefik", Namespace: "b"}, "https://target:8080", "https://198.18.0.7:443"},
	} {
		a, err := tc.o.RunArgs(l, Step{URL: tc.url, Insecure: true}, both("198.18.0.7"))
		if err != nil || a[len(a)-1] != tc.want {
			t.Errorf("%s -p h3 %s: %v %v, want %s", tc.o.Mesh, tc.url, a, err, tc.want)
		}
		line := strings.Join(a, " ")
		if mesh := !DirectURL(tc.url); strings.Contains(line, "--sni "+IngressHost) != mesh || strings.Contains(line, "Host: "+IngressHost) != mesh {
			t.Errorf("%s -p h3 %s: %s: the Ingress's host as SNI and :authority on the mesh path only", tc.o.Mesh, tc.url, line)
		}
	}
	// Other protocols keep 8081.
	a, _ := (Options{Mesh: MeshIngress, Class: "traefik", Namespace: "b"}).RunArgs(Load{Protocol: "h2", Duration: time.Second}, Step{URL: "https://target:8081"}, Addresses{})
	if got := a[len(a)-1]; got != "https://loadgen-target.b.svc.cluster.local:8081" {
		t.Errorf("-p h2 https://target:8081 went to %s", got)
	}
}

// TestCheckH3 checks that HTTP/3 is taken where it can go (through an
// ingress, and on the direct path under any mesh that has one) and
// refused, in one line that says why, where it cannot: through sidecars
// and ztunnel (they capture TCP; QUIC is UDP), ingress-nginx, loadgen's
// plain-HTTP Gateway, no proxy at all, and over plain http://.
func TestCheckH3(t *testing.T) {
	mesh := Step{Path: "mesh", URL: "https://target:8080"}
	direct := Step{Path: "direct", URL: "https://target:8081"}
	h3 := Load{Protocol: ProtocolH3}
	for _, tc := range []struct {
		o     Options
		load  Load
		steps []Step
		want  string // in the error; "" for none
	}{
		{Options{Mesh: MeshIngress, Class: "traefik"}, h3, []Step{mesh, direct}, ""},
		{Options{Mesh: MeshIstio}, h3, []Step{direct}, ""},
		{Options{Mesh: MeshIstioAmbient}, h3, []Step{direct, {Path: "other", URL: "https://example.com"}}, ""},
		{Options{Mesh: MeshIstio}, Load{Protocol: "h2"}, []Step{mesh}, ""},
		{Options{Mesh: MeshIstio}, h3, []Step{direct, mesh}, `path mesh (https://target:8080): -p h3 through --mesh istio: QUIC is UDP, and "Non-TCP based protocols, such as UDP, are not proxied"`},
		{Options{Mesh: MeshLinkerd}, h3, []Step{mesh}, "capture TCP only"},
		{Options{Mesh: MeshAppMesh}, h3, []Step{mesh}, "capture TCP only"},
		{Options{Mesh: MeshIstioAmbient}, h3, []Step{mesh}, "ztunnel carries TCP only"},
		{Options{Mesh: MeshIstioWaypoint}, h3, []Step{mesh}, "ztunnel carries TCP only"},
		{Options{Mesh: MeshIngressNginx}, h3, []Step{mesh}, "the controller serves no HTTP/3"},
		{Options{Mesh: MeshGateway, Class: "traefik"}, h3, []Step{mesh}, "loadgen's Gateway listens plain HTTP"},
		{Options{Mesh: MeshNone}, h3, []Step{mesh}, "no proxy serves HTTP/3"},
		{Options{Mesh: MeshSidecar}, h3, []Step{direct}, "carries HTTP/1.1"},
		{Options{Mesh: MeshIngress, Class: "traefik"}, h3, []Step{{Path: "plain", URL: "http://target:8080"}}, "path plain (http://target:8080): -p h3 is HTTP/3 over QUIC, always TLS: use https://target:8080"},
		{Options{Mesh: MeshIngress, Class: "traefik"}, h3, []Step{{Path: "g", URL: "https://target:9091"}}, "serves HTTP/3 on its direct port UDP 8443"},
	} {
		err := tc.o.CheckLoad(tc.load, tc.steps)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s -p %s: %v, want none", tc.o.Mesh, tc.load.Protocol, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s -p %s: %v, want %q", tc.o.Mesh, tc.load.Protocol, err, tc.want)
		case err != nil && strings.Contains(err.Error(), "\n"):
			t.Errorf("%s: a refusal of more than one line: %q", tc.o.Mesh, err)
		}
	}
}
