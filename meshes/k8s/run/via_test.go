package run

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"loadgen/meshes/k8s"
)

// nginxControllerPod is an ingress-nginx controller pod as its chart
// makes it: release (instance) labels, the controller container's args.
func nginxControllerPod(name, release string, args ...string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ingress-nginx", Labels: map[string]string{
			"app.kubernetes.io/name": "ingress-nginx", "app.kubernetes.io/component": "controller",
			"app.kubernetes.io/instance": release, "pod-template-hash": "abc12"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "controller",
			Args: append([]string{"/nginx-ingress-controller"}, args...)}}},
	}
}

func nginxService(name, release string, lb bool) *corev1.Service {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ingress-nginx"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app.kubernetes.io/name": "ingress-nginx",
			"app.kubernetes.io/component": "controller", "app.kubernetes.io/instance": release},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}, {Name: "https", Port: 443}}}}
	if lb {
		svc.Spec.Type = corev1.ServiceTypeLoadBalancer // pending: no status.loadBalancer
	}
	return svc
}

// twoNginxControllers is a cluster with two ingress-nginx controllers in
// one namespace, each of its own class (ingress-nginx's "Multiple Ingress
// controllers": "ensure the --controller-class= and --ingress-class are
// set to something different on each ingress controller ... Then use the
// same value in the IngressClass"), their LoadBalancer Services pending,
// the run's Ingress without an address.
func twoNginxControllers() []runtime.Object {
	return []runtime.Object{
		&networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx"}, Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"}},
		&networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "internal-nginx"}, Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/internal-ingress-nginx"}},
		nginxControllerPod("public-1", "public", "--publish-service=ingress-nginx/public-ingress-nginx-controller"),
		nginxControllerPod("public-2", "public", "--publish-service=ingress-nginx/public-ingress-nginx-controller"),
		nginxControllerPod("internal-1", "internal", "--controller-class=k8s.io/internal-ingress-nginx", "--ingress-class=internal-nginx"),
		nginxService("public-ingress-nginx-controller", "public", true),
		nginxService("internal-ingress-nginx-controller", "internal", true),
		&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "internal-ingress-nginx-controller-admission", Namespace: "ingress-nginx"},
			Spec: corev1.ServiceSpec{Selector: map[string]string{"app.kubernetes.io/instance": "internal"},
				Ports: []corev1.ServicePort{{Name: "https-webhook", Port: 443}}}},
	}
}

// TestViaServiceIngressNginx checks that by default (--via service) the
// workers load the Service of the controller of --class, read from what the
// controller says of itself (its --publish-service, else the Service
// selecting its pods with an http port), at once: a pending load
// balancer is not waited for. The cost watch selects that controller's
// pods only. --via published waits for the Ingress's address, as before.
func TestViaServiceIngressNginx(t *testing.T) {
	ingress := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
		"metadata": map[string]any{"name": k8s.TargetName, "namespace": "bench"}}}
	for _, tc := range []struct {
		class, via string
		want       string // the address; "" wants the wait to time out
		selector   string
	}{
		{"nginx", "", "public-ingress-nginx-controller.ingress-nginx.svc.cluster.local",
			"app.kubernetes.io/component=controller,app.kubernetes.io/instance=public,app.kubernetes.io/name=ingress-nginx"},
		{"internal-nginx", k8s.ViaService, "internal-ingress-nginx-controller.ingress-nginx.svc.cluster.local",
			"app.kubernetes.io/component=controller,app.kubernetes.io/instance=internal,app.kubernetes.io/name=ingress-nginx"},
		{"nginx", k8s.ViaPublished, "", ""},
	} {
		t.Run(tc.class+"-"+tc.via, func(t *testing.T) {
			o, err := k8s.Options{Mesh: k8s.MeshIngressNginx, Class: tc.class, Via: tc.via, Namespace: "bench"}.WithDefaults()
			if err != nil {
				t.Fatal(err)
			}
			k := &Coordinator{Cluster: fakeCluster(t, twoNginxControllers(), ingress), Options: o,
				TargetWait: 20 * time.Millisecond, Poll: time.Millisecond, Events: func(string, ...any) {}}
			k.defaults()
			// As waitTarget bounds it.
			ctx, cancel := context.WithTimeout(context.Background(), k.TargetWait)
			defer cancel()
			addr, err := k.waitAddresses(ctx)
			switch {
			case tc.want == "" && (err == nil || !strings.Contains(err.Error(), "got no address")):
				t.Errorf("--via published with no published address: %+v %v, want the wait to time out", addr, err)
			case tc.want != "" && (err != nil || addr != both(tc.want)):
				t.Errorf("address %+v %v, want %s at once", addr, err, tc.want)
			}
			if tc.selector == "" {
				return
			}
			ws, note := k.proxyWatches(context.Background(), addr)
			if note != "" || len(ws) != 1 || ws[0].Selector != tc.selector || ws[0].Namespace != "ingress-nginx" || !slices.Equal(ws[0].Containers, []string{"controller"}) {
				t.Errorf("watches %+v (%s), want the class's controller %s", ws, note, tc.selector)
			}
			k.proxies = ws
			n := 0
			step, _ := Watches(k.Options, 0)
			for _, w := range k.stepWatches(step) {
				if w.Name == "ingress-nginx" {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%d ingress-nginx watches in a step, want the class's controller's only", n)
			}
		})
	}
}

// TestViaServiceGateway checks that a Gateway's Service is the one its
// implementation labels with the Gateway's name (GEP-1762); the run says
// where it went, and records it (mesh.json).
func TestViaServiceGateway(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "envoy-bench-my-gw-1a2b", Namespace: "envoy-gateway-system",
		Labels: map[string]string{"gateway.networking.k8s.io/gateway-name": "my-gw"}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app": "envoy"}}}
	o, err := k8s.Options{Mesh: k8s.MeshGateway, Class: "eg", Gateway: "my-gw", Namespace: "bench"}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	k := &Coordinator{Cluster: fakeCluster(t, []runtime.Object{svc}), Options: o, Dir: t.TempDir(),
		TargetWait: 20 * time.Millisecond, Poll: time.Millisecond, Events: func(string, ...any) {}}
	ctx, cancel := context.WithTimeout(context.Background(), k.TargetWait)
	defer cancel()
	addr, err := k.waitAddresses(ctx)
	if want := both("envoy-bench-my-gw-1a2b.envoy-gateway-system.svc.cluster.local"); err != nil || addr != want {
		t.Fatalf("address %+v %v, want %+v", addr, err, want)
	}
	if err := k.writeSetup(addr); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(k.Dir, MeshFile))
	if err != nil || !strings.Contains(string(b), `"via": "service"`) || !strings.Contains(string(b), `"gateway": "my-gw"`) ||
		!strings.Contains(string(b), "envoy-bench-my-gw-1a2b.envoy-gateway-system") {
		t.Errorf("%s: %s %v", MeshFile, b, err)
	}
}

// TestIngressService checks that with --via service, --ingress-service names
// the controller's Service the workers load (Traefik's, whose Ingress status
// is never set on a cluster without a load balancer), at once; a named
// Service that does not exist fails in one line naming the flag; and a
// controller whose Service cannot be found and whose Ingress publishes no
// address fails within PublishWait in one line naming the flag, not after
// --target-wait.
func TestIngressService(t *testing.T) {
	ingress := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
		"metadata": map[string]any{"name": k8s.TargetName, "namespace": "bench"}}}
	traefik := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "traefik", Namespace: "traefik"},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, Selector: map[string]string{"app.kubernetes.io/name": "traefik"}}}
	for _, tc := range []struct {
		name    string
		o       k8s.Options
		want    string // the address; "" wants an error
		wantErr string
	}{
		{"named", k8s.Options{Mesh: k8s.MeshIngress, Class: "traefik", IngressService: "traefik/traefik"},
			"traefik.traefik.svc.cluster.local", ""},
		{"named, gateway", k8s.Options{Mesh: k8s.MeshGateway, Class: "traefik", IngressService: "traefik/traefik"},
			"traefik.traefik.svc.cluster.local", ""},
		{"named, absent", k8s.Options{Mesh: k8s.MeshIngress, Class: "traefik", IngressService: "traefik/traefik-web"},
			"", "--ingress-service traefik/traefik-web: "},
		{"not found", k8s.Options{Mesh: k8s.MeshIngress, Class: "traefik"},
			"", "--mesh ingress --class traefik: no Service of its controller found, and Ingress bench/loadgen-target got no address within 50ms: " +
				"waited on its status.loadBalancer.ingress; is its controller running (class traefik)?: name the controller's Service with --ingress-service NAMESPACE/NAME"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.o
			o.Namespace = "bench"
			o, err := o.WithDefaults()
			if err != nil {
				t.Fatal(err)
			}
			var said []string
			k := &Coordinator{Cluster: fakeCluster(t, []runtime.Object{traefik}, ingress), Options: o,
				TargetWait: time.Hour, PublishWait: 50 * time.Millisecond, Poll: time.Millisecond,
				Events: func(f string, a ...any) { said = append(said, fmt.Sprintf(f, a...)) }}
			k.defaults()
			ctx, cancel := context.WithTimeout(context.Background(), k.TargetWait)
			defer cancel()
			start := time.Now()
			addr, err := k.waitAddresses(ctx)
			switch {
			case tc.want != "" && (err != nil || addr != both(tc.want)):
				t.Errorf("address %+v %v, want %s", addr, err, tc.want)
			case tc.want != "" && !slices.ContainsFunc(said, func(s string) bool { return strings.Contains(s, "as --ingress-service names it") }):
				t.Errorf("the run does not say where it went: %q", said)
			case tc.want == "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "\n")):
				t.Errorf("%+v %v, want one line with %q", addr, err, tc.wantErr)
			case time.Since(start) > time.Minute:
				t.Errorf("took %v: waited for --target-wait", time.Since(start))
			}
		})
	}
	for _, bad := range []k8s.Options{
		{Mesh: k8s.MeshIstio, IngressService: "traefik/traefik"},
		{Mesh: k8s.MeshIngress, Class: "traefik", Via: k8s.ViaPublished, IngressService: "traefik/traefik"},
		{Mesh: k8s.MeshIngress, Class: "traefik", IngressService: "traefik"},
		{Mesh: k8s.MeshIngress, Class: "traefik", IngressService: "Traefik/x"},
	} {
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "--ingress-service") {
			t.Errorf("%+v: %v, want an error naming --ingress-service", bad, err)
		}
	}
}
