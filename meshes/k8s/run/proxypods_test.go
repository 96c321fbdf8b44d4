package run

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
	"loadgen/meshes/k8s/cost"
)

// TestProxyWatches checks that the proxy behind an ingress or a gateway is
// the pods of the Service at the address the cluster published — by its
// cluster DNS name, cluster IP, external IP or load balancer address —
// whatever the implementation; never a guessed name.
func TestProxyWatches(t *testing.T) {
	svc := func(ns, name, ip string, sel map[string]string, lb ...corev1.LoadBalancerIngress) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec:   corev1.ServiceSpec{ClusterIP: ip, ClusterIPs: []string{ip}, Selector: sel},
			Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: lb}}}
	}
	traefik := map[string]string{"app.kubernetes.io/name": "traefik"}
	objs := []runtime.Object{
		svc("traefik", "traefik", "198.18.112.40", traefik),
		svc("envoy-gateway-system", "envoy-b-gw", "198.18.112.41", map[string]string{"gateway.envoyproxy.io/owning-gateway-name": "loadgen-gateway"},
			corev1.LoadBalancerIngress{IP: "203.0.113.7"}),
		svc("lb", "elb", "198.18.112.42", map[string]string{"app": "nginx"}, corev1.LoadBalancerIngress{Hostname: "a1.elb.example.com"}),
		svc("manual", "no-selector", "198.18.112.43", nil),
		svc("b", k8s.TargetName, "198.18.112.44", map[string]string{k8s.LabelName: k8s.TargetName}),
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "gw-1", Namespace: "istio", Labels: map[string]string{"gateway.networking.k8s.io/gateway-name": k8s.GatewayName}}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "cilium-envoy-x", Namespace: "kube-system", Labels: map[string]string{"k8s-app": "cilium-envoy"}}},
	}
	for _, tc := range []struct {
		name string
		o    k8s.Options
		addr k8s.Addresses
		want []cost.Watch
		note string
	}{
		{"cluster IP", k8s.Options{Mesh: k8s.MeshGateway, Class: "traefik", Namespace: "b"}, both("198.18.112.40"),
			[]cost.Watch{{Name: "gateway", Role: "proxy", Namespace: "traefik", Selector: "app.kubernetes.io/name=traefik"}}, ""},
		{"DNS name", k8s.Options{Mesh: k8s.MeshIngress, Class: "traefik", Namespace: "b"}, both("traefik.traefik.svc.cluster.local"),
			[]cost.Watch{{Name: "ingress", Role: "proxy", Namespace: "traefik", Selector: "app.kubernetes.io/name=traefik"}}, ""},
		{"load balancer IP", k8s.Options{Mesh: k8s.MeshGateway, Class: "eg", Namespace: "b"}, both("203.0.113.7"),
			[]cost.Watch{{Name: "gateway", Role: "proxy", Namespace: "envoy-gateway-system", Selector: "gateway.envoyproxy.io/owning-gateway-name=loadgen-gateway"}}, ""},
		{"load balancer hostname", k8s.Options{Mesh: k8s.MeshIngress, Class: "nginx-inc", Namespace: "b"}, both("A1.elb.example.com"),
			[]cost.Watch{{Name: "ingress", Role: "proxy", Namespace: "lb", Selector: "app=nginx"}}, ""},
		{"no such Service", k8s.Options{Mesh: k8s.MeshGateway, Class: "eg", Namespace: "b"}, both("192.0.2.1"),
			nil, "no Service of the cluster is at 192.0.2.1"},
		{"no selector", k8s.Options{Mesh: k8s.MeshGateway, Class: "x", Namespace: "b"}, both("198.18.112.43"),
			nil, "Service manual/no-selector at 198.18.112.43 has no selector"},
		{"a proxy per Gateway, labelled by its name (GEP-1762)", k8s.Options{Mesh: k8s.MeshGateway, Class: "istio", Namespace: "istio"}, both("192.0.2.1"),
			[]cost.Watch{{Name: "gateway", Role: "proxy", Namespace: "istio", Selector: "gateway.networking.k8s.io/gateway-name=" + k8s.GatewayName}}, ""},
		{"lattice", k8s.Options{Mesh: k8s.MeshGateway, Class: k8s.ClassLattice, Namespace: "b"}, k8s.Addresses{HTTP: "h.lattice", GRPC: "g.lattice"},
			nil, "outside the cluster"},
		// Cilium's gateway Service has no selector: its proxy is the
		// cilium-envoy DaemonSet's pods, on the run's nodes (as ztunnel).
		{"cilium", k8s.Options{Mesh: k8s.MeshGateway, Class: "cilium", Namespace: "b", RunID: "r1"}, both("198.18.112.43"),
			[]cost.Watch{{Name: "gateway", Role: "proxy", Namespace: "kube-system", Selector: "k8s-app=cilium-envoy",
				NodesOf: &cost.PodSet{Namespace: "b", Selector: k8s.Selector("r1")}}}, ""},
		{"sidecar mesh", k8s.Options{Mesh: k8s.MeshIstio, Namespace: "b"}, k8s.Addresses{}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := &Coordinator{Cluster: &cluster.Cluster{Client: fake.NewClientset(objs...)}, Options: tc.o}
			got, note := k.proxyWatches(context.Background(), tc.addr)
			if !slices.EqualFunc(got, tc.want, func(a, b cost.Watch) bool { return reflect.DeepEqual(a, b) }) {
				t.Errorf("watches %+v, want %+v", got, tc.want)
			}
			if (tc.note == "") != (note == "") || !strings.Contains(note, tc.note) {
				t.Errorf("note %q, want %q", note, tc.note)
			}
		})
	}
}

func TestServiceDNSName(t *testing.T) {
	for _, tc := range []struct{ in, name, ns string }{
		{"traefik.traefik.svc.cluster.local", "traefik", "traefik"},
		{"gw.b.svc", "gw", "b"},
		{"gw.b.svc.corp.example.", "gw", "b"},
		{"a1.elb.example.com", "", ""},
		{"198.18.112.40", "", ""},
		{"svc", "", ""},
	} {
		name, ns, ok := serviceDNSName(tc.in)
		if name != tc.name || ns != tc.ns || ok != (tc.name != "") {
			t.Errorf("%s: %q %q %v", tc.in, name, ns, ok)
		}
	}
}

// TestProxiesFoundWithoutCost: a run that records no cost (--no-metrics)
// still finds the proxy behind an ingress or a gateway, whose nodes the
// workers keep off (awayFrom) and the steps' placement records.
func TestProxiesFoundWithoutCost(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "traefik", Namespace: "traefik"},
		Spec: corev1.ServiceSpec{ClusterIP: "198.18.112.40", ClusterIPs: []string{"198.18.112.40"}, Selector: map[string]string{"app": "traefik"}}}
	o := k8s.Options{Mesh: k8s.MeshGateway, Class: "traefik", Namespace: "b", Metrics: k8s.MetricsNone}
	k := &Coordinator{Cluster: &cluster.Cluster{Client: fake.NewClientset(svc)}, Options: o, Events: func(string, ...any) {}}
	k.findProxies(context.Background(), both("198.18.112.40"))
	away := k.awayFrom()
	if len(away) != 1 || away[0].Namespace != "traefik" || metav1.FormatLabelSelector(away[0].Selector) != "app=traefik" {
		t.Errorf("with no cost watcher, the workers keep off %+v, want the gateway's pods (traefik, app=traefik)", away)
	}
}
