package run

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cost"
)

// TestGatewayControlPlanes checks that a gateway's or an ingress's steps
// record its controller's pods where they run apart from the proxy (Envoy
// Gateway); a controller in the proxy's own pods (NGINX Gateway Fabric before
// 2.0) is counted once, by the proxy's watch, and said so; a class with no
// default says so once over the run's steps, naming --control-plane, and
// records none.
func TestGatewayControlPlanes(t *testing.T) {
	pod := func(name, ns string, labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}, Spec: corev1.PodSpec{NodeName: "n1"}}
	}
	svc := func(ns, ip string, sel map[string]string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "proxy", Namespace: ns},
			Spec: corev1.ServiceSpec{ClusterIP: ip, ClusterIPs: []string{ip}, Selector: sel}}
	}
	envoy := map[string]string{"app.kubernetes.io/name": "envoy", "gateway.envoyproxy.io/owning-gateway-name": k8s.GatewayName}
	ngf1 := map[string]string{"app.kubernetes.io/name": "nginx-gateway-fabric", "app.kubernetes.io/instance": "ngf"}
	for _, tc := range []struct {
		name    string
		o       k8s.Options
		objs    []runtime.Object
		want    string // the control plane's watch, NAMESPACE/SELECTOR; "": none
		said    string // said once over the steps
		proxies int
	}{
		{"envoy gateway", k8s.Options{Mesh: k8s.MeshGateway, Class: "eg"}, []runtime.Object{
			svc("envoy-gateway-system", "198.18.0.9", envoy), pod("envoy-1", "envoy-gateway-system", envoy),
			pod("envoy-gateway-1", "envoy-gateway-system", map[string]string{"control-plane": "envoy-gateway"}),
		}, "envoy-gateway-system/control-plane=envoy-gateway", "", 1},
		{"nginx gateway fabric 1.x, one pod", k8s.Options{Mesh: k8s.MeshGateway, Class: "nginx"}, []runtime.Object{
			svc("nginx-gateway", "198.18.0.9", ngf1), pod("ngf-1", "nginx-gateway", ngf1),
		}, "", "control plane nginx-gateway-fabric: its pod nginx-gateway/ngf-1 is the gateway proxy's too: counted once", 1},
		{"ingress haproxy", k8s.Options{Mesh: k8s.MeshIngress, Class: "haproxy"}, []runtime.Object{
			svc("haproxy", "198.18.0.9", map[string]string{"app": "haproxy"}), pod("haproxy-1", "haproxy", map[string]string{"app": "haproxy"}),
		}, "", "class haproxy: loadgen knows no documented control plane for it: the steps record none; name its pods with --control-plane", 1},
		{"ingress-nginx", k8s.Options{Mesh: k8s.MeshIngressNginx}, twoNginxControllers(),
			"", "ingress-nginx: the controller is the proxy and the control plane at once", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.Namespace, o.RunID = "bench", "r1"
			o, err := o.WithDefaults()
			if err != nil {
				t.Fatal(err)
			}
			objs := append(tc.objs, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "loadgen-target-a", Namespace: "bench",
				Labels: map[string]string{k8s.LabelName: k8s.TargetName}}, Spec: corev1.PodSpec{NodeName: "n1"}})
			var events []string
			rec := &recordingWatcher{}
			k := &Coordinator{Cluster: fakeCluster(t, objs), Options: o, Watcher: rec,
				Events: func(f string, a ...any) { events = append(events, fmt.Sprintf(f, a...)) }}
			ctx := context.Background()
			k.findProxies(ctx, both("198.18.0.9"))
			for step := range 2 {
				collected := make(chan struct{})
				close(collected)
				now := time.Now()
				k.sampleWindow(ctx, step, now, cost.Window{From: now.Add(-time.Second), To: now, Measured: time.Second}, collected)
			}
			var cps []string
			proxies := 0
			for _, w := range rec.started {
				switch w.Role {
				case RoleControlPlane:
					cps = append(cps, w.Namespace+"/"+w.Selector)
				case "proxy":
					proxies++
				}
			}
			want := []string{}
			if tc.want != "" {
				want = []string{tc.want, tc.want} // one per step
			}
			if strings.Join(cps, " ") != strings.Join(want, " ") || proxies != 2*tc.proxies {
				t.Errorf("control plane watches %v, want %v; %d proxy watches, want %d", cps, want, proxies, 2*tc.proxies)
			}
			n := 0
			for _, e := range events {
				if tc.said != "" && strings.Contains(e, tc.said) {
					n++
				}
			}
			if tc.said != "" && n != 1 {
				t.Errorf("said %q %d times, want once: %q", tc.said, n, events)
			}
		})
	}
}
