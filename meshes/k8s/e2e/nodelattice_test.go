package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"

	"loadgen/meshes/k8s"
	"loadgen/results/store"
)

// TestNodeLatticeAddress checks a run through Amazon VPC Lattice, which
// publishes no Gateway status.addresses; its controller writes each route's
// Lattice domain into the route's annotation. The test plays that controller:
// it accepts the GatewayClass; once the run's Gateway (named by
// --gateway-name, the service network's name) exists it marks it Accepted and
// Programmed, and once the HTTPRoute exists it accepts it and annotates it
// with a domain that the node's CoreDNS and kube-proxy carry to the target (a
// Service of the test's, port 80 like a Lattice listener). The run must
// report the Gateway's and the route's status, load that domain, and every
// step complete through it.
func TestNodeLatticeAddress(t *testing.T) {
	beside(t)
	n := testNode(t)
	installCRDs(t, n.RESTConfig)
	bin := buildLoadgen(t)
	ctx := context.Background()
	dyn := dynamic.NewForConfigOrDie(n.RESTConfig)
	classes := dyn.Resource(schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gatewayclasses"})
	class := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
		"metadata": map[string]any{"name": k8s.ClassLattice},
		"spec":     map[string]any{"controllerName": "application-networking.k8s.aws/gateway-api-controller"},
	}}
	created, err := classes.Create(ctx, class, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = classes.Delete(context.Background(), k8s.ClassLattice, metav1.DeleteOptions{}) })
	_ = unstructured.SetNestedSlice(created.Object, []any{map[string]any{
		"type": "Accepted", "status": "True", "reason": "Accepted", "message": "the test plays the Lattice controller",
		"lastTransitionTime": time.Now().UTC().Format(time.RFC3339), "observedGeneration": created.GetGeneration(),
	}}, "status", "conditions")
	if _, err := classes.UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}

	const ns = "node-lattice"
	domain := "lattice-sim." + ns + ".svc.cluster.local"
	dir := filepath.Join(t.TempDir(), "results")
	sweep := writeNodeSweep(t, "ladder: c2t2", "duration: 2s", `paths: [{name: lattice, url: "http://target:8080"}]`)
	const network = "node-lattice-network"
	cmd, out := startLoadgen(t, bin, n.Kubeconfig, "k8s", "run", "--mesh", "gateway", "--class", k8s.ClassLattice, "--gateway-name", network,
		"-n", ns, "-f", sweep, "--workers", "1", "-o", dir, "--image", n.Image, "--same-node-ok", "--start-lead", "5s", "--target-wait", "90s",
		"--no-metrics", "--run-id", "lat")

	gws := dyn.Resource(schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gateways"}).Namespace(ns)
	routes := dyn.Resource(schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "httproutes"}).Namespace(ns)
	now := time.Now().UTC().Format(time.RFC3339)
	cond := func(typ, msg string, gen int64) map[string]any {
		return map[string]any{"type": typ, "status": "True", "reason": typ, "message": msg, "lastTransitionTime": now, "observedGeneration": gen}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		gw, gerr := gws.Get(ctx, network, metav1.GetOptions{})
		r, err := routes.Get(ctx, k8s.TargetName, metav1.GetOptions{})
		if gerr == nil && err == nil {
			_ = unstructured.SetNestedSlice(gw.Object, []any{cond("Accepted", "application-networking.k8s.aws/gateway-api-controller", gw.GetGeneration()),
				cond("Programmed", "aws-service-network-arn: arn:aws:vpc-lattice:test", gw.GetGeneration())}, "status", "conditions")
			if _, err := gws.UpdateStatus(ctx, gw, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			_ = unstructured.SetNestedSlice(r.Object, []any{map[string]any{
				"parentRef":      map[string]any{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": network},
				"controllerName": "application-networking.k8s.aws/gateway-api-controller",
				"conditions":     []any{cond("Accepted", "the test plays the Lattice controller", r.GetGeneration())},
			}}, "status", "parents")
			if r, err = routes.UpdateStatus(ctx, r, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			sim := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "lattice-sim", Namespace: ns},
				Spec: corev1.ServiceSpec{Selector: map[string]string{k8s.LabelName: k8s.TargetName},
					Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(k8s.PortHTTP)}}}}
			if _, err := n.Client.CoreV1().Services(ns).Create(ctx, sim, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			r.SetAnnotations(map[string]string{k8s.AnnLatticeDomain: domain})
			if _, err := routes.Update(ctx, r, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run made no HTTPRoute: %s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code := waitExit(t, cmd, out, 4*time.Minute); code != 0 {
		t.Fatalf("k8s run --class %s: exit %d\n%s", k8s.ClassLattice, code, out)
	}
	if !strings.Contains(out.String(), "HTTPRoute "+k8s.TargetName+" answers at "+domain) {
		t.Errorf("the run did not say it read the route's annotation:\n%s", out)
	}
	if !strings.Contains(out.String(), "Gateway "+ns+"/"+network+" is Accepted and Programmed (aws-service-network-arn:") {
		t.Errorf("the run did not report the Gateway's status:\n%s", out)
	}
	_, steps, err := store.ReadSweep(dir)
	if err != nil || len(steps) == 0 {
		t.Fatalf("%d steps, %v", len(steps), err)
	}
	for _, st := range steps {
		if st.Run == nil || st.Run.Summary.Requests == 0 {
			t.Errorf("step %s: failed %q", st.ID, st.Failed)
			continue
		}
		if !strings.Contains(st.Run.Config.Target, "//"+domain+":80/") {
			t.Errorf("step %s loaded %s, want the route's domain %s", st.ID, st.Run.Config.Target, domain)
		}
	}
	noneLeftOn(t, n.Client, ns)
}
