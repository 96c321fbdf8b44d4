package node

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"loadgen/meshes/k8s"
)

// rendered is what loadgen k8s run creates for a mesh: the namespace and
// the target's and a worker's pods as the API server would see them.
func rendered(t *testing.T, o k8s.Options) (namespaceMeta, *corev1.Pod, *corev1.Pod) {
	t.Helper()
	r, err := k8s.Render(o, &k8s.JobSpec{Name: k8s.ClientName, Workers: 1, Connections: 1, Threads: 1, RunArgs: []string{"http://x"}})
	if err != nil {
		t.Fatal(err)
	}
	var ns namespaceMeta
	var target, worker *corev1.Pod
	for _, u := range r.Objects {
		switch u.GetKind() {
		case "Namespace":
			ns = namespaceMeta{Name: u.GetName(), Labels: u.GetLabels(), Annotations: u.GetAnnotations()}
		case "Deployment":
			var d appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d); err != nil {
				t.Fatal(err)
			}
			target = &corev1.Pod{ObjectMeta: d.Spec.Template.ObjectMeta, Spec: d.Spec.Template.Spec}
		case "Job":
			var j batchv1.Job
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &j); err != nil {
				t.Fatal(err)
			}
			worker = &corev1.Pod{ObjectMeta: j.Spec.Template.ObjectMeta, Spec: j.Spec.Template.Spec}
		}
	}
	return ns, target, worker
}

var testInjection = InjectionConfig{Proxy: k8s.ProxyHAProxy, ProxyImage: "loadgen.local/haproxy:x", CaptureImage: "loadgen.local/loadgen:x",
	Upstream: "loadgen-target.{namespace}.svc.cluster.local:8080", AppPort: 8080, ExcludeOutboundIPRanges: []string{"198.18.112.1/32"}}

// injected finds the proxy and the capture's flags the webhook gave pod.
func injected(pod *corev1.Pod, proxy, init string) (native bool, capture map[string]string, found bool) {
	for _, c := range pod.Spec.InitContainers {
		if c.Name == init {
			capture = map[string]string{}
			for i := 2; i+1 < len(c.Args); i += 2 {
				capture[c.Args[i]] = c.Args[i+1]
			}
		}
		if c.Name == proxy {
			native, found = true, true
		}
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == proxy {
			found = true
		}
	}
	return native, capture, found && capture != nil
}

func hasPort(list string, p string) bool { return slices.Contains(strings.Split(list, ","), p) }

// TestInjectionFollowsTheContracts: what loadgen renders for each mesh
// and mode gets, by the documented rules, a proxy where the mode places
// one and nowhere else; the direct port is left out of the server's
// inbound and the client's outbound capture; the workers' proxy is a
// native sidecar (a Job's pod must end); Istio's concurrency reaches the
// proxy.
func TestInjectionFollowsTheContracts(t *testing.T) {
	for _, tc := range []struct {
		mesh, mode     string
		proxy, init    string
		server, client bool
		threads        string
	}{
		{meshIstio, k8s.ModeBoth, "istio-proxy", "istio-init", true, true, "nbthread 2"},
		{meshIstio, k8s.ModeServerOnly, "istio-proxy", "istio-init", true, false, "nbthread 2"},
		{meshIstio, k8s.ModeClientOnly, "istio-proxy", "istio-init", false, true, "nbthread 2"},
		{meshLinkerd, k8s.ModeBoth, "linkerd-proxy", "linkerd-init", true, true, "nbthread 1"},
		{meshLinkerd, k8s.ModeServerOnly, "linkerd-proxy", "linkerd-init", true, false, "nbthread 1"},
		{meshLinkerd, k8s.ModeClientOnly, "linkerd-proxy", "linkerd-init", false, true, "nbthread 1"},
	} {
		t.Run(tc.mesh+"-"+tc.mode, func(t *testing.T) {
			ns, target, worker := rendered(t, k8s.Options{Mesh: tc.mesh, Mode: tc.mode, Namespace: "bench"})
			for _, side := range []struct {
				name   string
				pod    *corev1.Pod
				want   bool
				server bool
			}{{"target", target, tc.server, true}, {"worker", worker, tc.client, false}} {
				got, err := testInjection.Inject(tc.mesh, side.pod, ns)
				if err != nil {
					t.Fatal(err)
				}
				if (got != nil) != side.want {
					t.Fatalf("%s: injected %v, want %v", side.name, got != nil, side.want)
				}
				if got == nil {
					continue
				}
				native, capture, ok := injected(got, tc.proxy, tc.init)
				if !ok {
					t.Fatalf("%s: no %s and %s: %+v", side.name, tc.proxy, tc.init, got.Spec)
				}
				if side.server && !hasPort(capture["--exclude-inbound-ports"], "8081") {
					t.Errorf("%s: the direct port is captured inbound: %v", side.name, capture)
				}
				if !side.server && !hasPort(capture["--exclude-outbound-ports"], "8081") {
					t.Errorf("%s: the direct port is captured outbound: %v", side.name, capture)
				}
				if !side.server && !native {
					t.Errorf("%s: the proxy is not a native sidecar", side.name)
				}
				if conf := got.Annotations[annSidecarConfig]; !strings.Contains(conf, tc.threads) || !strings.Contains(conf, "loadgen-target.bench.svc.cluster.local:8080") {
					t.Errorf("%s: the proxy's config lacks %q or the upstream:\n%s", side.name, tc.threads, conf)
				}
				if again, err := testInjection.Inject(tc.mesh, got, ns); err != nil || again != nil {
					t.Errorf("%s: injected twice (%v)", side.name, err)
				}
			}
		})
	}
}

// TestInjectionPolicy: the documented switches, beside what loadgen sets.
func TestInjectionPolicy(t *testing.T) {
	pod := func(labels, ann map[string]string) *corev1.Pod {
		p := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app"}}}}
		p.Labels, p.Annotations = labels, ann
		return p
	}
	ns := func(labels, ann map[string]string) namespaceMeta {
		return namespaceMeta{Name: "x", Labels: labels, Annotations: ann}
	}
	for _, tc := range []struct {
		name string
		mesh string
		pod  *corev1.Pod
		ns   namespaceMeta
		want bool
	}{
		{"istio namespace", meshIstio, pod(nil, nil), ns(map[string]string{istioNSLabel: "enabled"}, nil), true},
		{"istio revision", meshIstio, pod(nil, nil), ns(map[string]string{istioRevLabel: "1-32"}, nil), true},
		{"istio pod label false", meshIstio, pod(map[string]string{istioInject: "false"}, nil), ns(map[string]string{istioNSLabel: "enabled"}, nil), false},
		{"istio pod annotation false", meshIstio, pod(nil, map[string]string{istioInject: "false"}), ns(map[string]string{istioNSLabel: "enabled"}, nil), false},
		{"istio the label wins", meshIstio, pod(map[string]string{istioInject: "true"}, map[string]string{istioInject: "false"}), ns(nil, nil), true},
		{"istio pod label true", meshIstio, pod(map[string]string{istioInject: "true"}, nil), ns(nil, nil), true},
		{"istio namespace disabled", meshIstio, pod(map[string]string{istioInject: "true"}, nil), ns(map[string]string{istioNSLabel: "disabled"}, nil), false},
		{"istio nothing", meshIstio, pod(nil, nil), ns(nil, nil), false},
		{"linkerd namespace", meshLinkerd, pod(nil, nil), ns(nil, map[string]string{linkerdInject: "enabled"}), true},
		{"linkerd pod", meshLinkerd, pod(nil, map[string]string{linkerdInject: "enabled"}), ns(nil, nil), true},
		{"linkerd pod disabled", meshLinkerd, pod(nil, map[string]string{linkerdInject: "disabled"}), ns(nil, map[string]string{linkerdInject: "enabled"}), false},
		{"linkerd nothing", meshLinkerd, pod(nil, nil), ns(nil, nil), false},
	} {
		got, err := testInjection.Inject(tc.mesh, tc.pod, tc.ns)
		if err != nil || (got != nil) != tc.want {
			t.Errorf("%s: injected %v (%v), want %v", tc.name, got != nil, err, tc.want)
		}
	}
	// Concurrency, ranges, and the broken contract.
	p := pod(nil, map[string]string{istioProxyConfig: "concurrency: 4", istioExcludeIn: "8081,9000-9002"})
	got, err := testInjection.Inject(meshIstio, p, ns(map[string]string{istioNSLabel: "enabled"}, nil))
	if err != nil {
		t.Fatal(err)
	}
	_, capture, _ := injected(got, "istio-proxy", "istio-init")
	if capture["--exclude-inbound-ports"] != "15090,15021,15020,8081,9000,9001,9002" || !strings.Contains(got.Annotations[annSidecarConfig], "nbthread 4") {
		t.Errorf("capture %v, config:\n%s", capture, got.Annotations[annSidecarConfig])
	}
	broken := testInjection
	broken.BreakExclusionsIn = []string{"x"}
	got, _ = broken.Inject(meshIstio, p, ns(map[string]string{istioNSLabel: "enabled"}, nil))
	if _, capture, _ := injected(got, "istio-proxy", "istio-init"); hasPort(capture["--exclude-inbound-ports"], "8081") {
		t.Errorf("BreakExclusionsIn left 8081 out: %v", capture)
	}
	other := ns(map[string]string{istioNSLabel: "enabled"}, nil)
	other.Name = "y"
	got, _ = broken.Inject(meshIstio, p, other)
	if _, capture, _ := injected(got, "istio-proxy", "istio-init"); !hasPort(capture["--exclude-inbound-ports"], "8081") {
		t.Errorf("BreakExclusionsIn broke another namespace: %v", capture)
	}
	if _, err := testInjection.Inject(meshIstio, pod(nil, map[string]string{istioExcludeOut: "80,x"}), ns(map[string]string{istioNSLabel: "enabled"}, nil)); err == nil {
		t.Error("a bad port list was accepted")
	}
}
