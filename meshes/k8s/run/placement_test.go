package run

import (
	"context"
	"reflect"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/version"
	fakediscovery "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/kubernetes/fake"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
	"loadgen/results"
)

// TestPlacement checks that a step records each pod of the comparison on its
// node — the targets, its own workers (not the step before's), the waypoint
// and the ztunnels of the run's nodes — with the proxies' images, the
// Kubernetes version and the workers' requests.
func TestPlacement(t *testing.T) {
	o, _ := k8s.Options{Mesh: k8s.MeshIstioWaypoint, Namespace: "bench", RunID: "r1"}.WithDefaults()
	run := func(extra map[string]string) map[string]string {
		l := map[string]string{k8s.LabelManagedBy: k8s.ManagedBy, k8s.LabelRun: o.RunID}
		for k, v := range extra {
			l[k] = v
		}
		return l
	}
	pod := func(name, ns, node string, labels map[string]string, containers ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}, Spec: corev1.PodSpec{NodeName: node}}
		for _, c := range containers {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c, Image: "img/" + c + ":1"})
		}
		return p
	}
	step := func(s string) map[string]string {
		return run(map[string]string{k8s.LabelName: k8s.ClientName, k8s.LabelStep: s})
	}
	client := fake.NewClientset(
		pod("loadgen-target-a", "bench", "n1", run(map[string]string{k8s.LabelName: k8s.TargetName}), "http-httpbin"),
		pod("loadgen-target-direct-a", "bench", "n1", run(map[string]string{k8s.LabelName: k8s.TargetDirectName}), "http-direct"),
		pod("lg-r1-3-x", "bench", "n2", step("3"), "loadgen"),
		pod("lg-r1-3-y", "bench", "n3", step("3"), "loadgen"),
		pod("lg-r1-2-old", "bench", "n4", step("2"), "loadgen"),
		pod("waypoint-1", "bench", "n5", map[string]string{"gateway.networking.k8s.io/gateway-name": k8s.WaypointName}, "istio-proxy"),
		pod("ztunnel-1", "istio-system", "n1", map[string]string{"app": "ztunnel"}, "istio-proxy"),
		pod("ztunnel-6", "istio-system", "n6", map[string]string{"app": "ztunnel"}, "istio-proxy"),
	)
	client.Discovery().(*fakediscovery.FakeDiscovery).FakedServerVersion = &version.Info{GitVersion: "v1.35.0"}
	k := &Coordinator{Cluster: &cluster.Cluster{Client: client}, Options: o}
	job := o.Job(k8s.JobSpec{Name: k8s.JobName(o.RunID, 3), Workers: 2, Index: 3})
	got := k.placement(context.Background(), 3, job)
	img := func(c string) []results.ContainerImage {
		return []results.ContainerImage{{Container: c, Image: "img/" + c + ":1"}}
	}
	want := &results.Placement{Kubernetes: "v1.35.0", WorkerRequests: "cpu=100m,memory=64Mi", Pods: []results.PlacedPod{
		{Role: "target", Name: "loadgen-target-a", Node: "n1"},
		{Role: "direct-target", Name: "loadgen-target-direct-a", Node: "n1"},
		{Role: "worker", Name: "lg-r1-3-x", Node: "n2"},
		{Role: "worker", Name: "lg-r1-3-y", Node: "n3"},
		{Role: "ztunnel", Name: "ztunnel-1", Node: "n1", Proxies: img("istio-proxy")},
		{Role: "waypoint", Name: "waypoint-1", Node: "n5", Proxies: img("istio-proxy")},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("placement\n%+v\nwant\n%+v", got, want)
	}

	// A sidecar mesh: the sidecars' images, a native sidecar's too.
	o2, _ := k8s.Options{Mesh: k8s.MeshLinkerd, Namespace: "bench", RunID: "r1"}.WithDefaults()
	always := corev1.ContainerRestartPolicyAlways
	w := pod("lg-r1-0-x", "bench", "n2", step("0"), "loadgen")
	w.Spec.InitContainers = []corev1.Container{{Name: "linkerd-init", Image: "init:1"}, {Name: "linkerd-proxy", Image: "cr.l5d.io/proxy:edge", RestartPolicy: &always}}
	tg := pod("loadgen-target-a", "bench", "n1", run(map[string]string{k8s.LabelName: k8s.TargetName}), "http-httpbin", "linkerd-proxy")
	k2 := &Coordinator{Cluster: &cluster.Cluster{Client: fake.NewClientset(w, tg)}, Options: o2}
	got = k2.placement(context.Background(), 0, &batchv1.Job{})
	if len(got.Pods) != 2 || !reflect.DeepEqual(got.Pods[0].Proxies, img("linkerd-proxy")) ||
		!reflect.DeepEqual(got.Pods[1].Proxies, []results.ContainerImage{{Container: "linkerd-proxy", Image: "cr.l5d.io/proxy:edge"}}) {
		t.Errorf("linkerd's placement: %+v", got.Pods)
	}
}

// TestPlacementProxyTerms checks that each sidecar's threads, requests and
// limits are recorded as its injected container's spec has them, not as
// loadgen asked (--concurrency 2, --proxy-cpu 1, --proxy-memory 512Mi): a
// mesh-wide setting, a LimitRange or an injector that reads another
// annotation makes them differ, and the step says what ran.
func TestPlacementProxyTerms(t *testing.T) {
	res := func(req, lim string) corev1.ResourceRequirements {
		parse := func(s string) corev1.ResourceList {
			if s == "" {
				return nil
			}
			l := corev1.ResourceList{}
			for _, kv := range strings.Split(s, ",") {
				k, v, _ := strings.Cut(kv, "=")
				l[corev1.ResourceName(k)] = resource.MustParse(v)
			}
			return l
		}
		return corev1.ResourceRequirements{Requests: parse(req), Limits: parse(lim)}
	}
	always := corev1.ContainerRestartPolicyAlways
	for _, tc := range []struct {
		mesh  string
		proxy corev1.Container
		want  results.ContainerImage
	}{
		// Istio: ProxyConfig's concurrency as pilot-agent's --concurrency
		// (its injection template), the sidecar's resources from its
		// annotations or the mesh's defaults.
		{k8s.MeshIstio, corev1.Container{Name: "istio-proxy", Image: "istio/proxyv2:1.28.0",
			Args:      []string{"proxy", "sidecar", "--domain", "$(POD_NAMESPACE).svc.cluster.local", "--concurrency", "4"},
			Resources: res("cpu=100m,memory=128Mi", "cpu=2,memory=1Gi")},
			results.ContainerImage{Container: "istio-proxy", Image: "istio/proxyv2:1.28.0", Threads: 4,
				Requests: "cpu=100m,memory=128Mi", Limits: "cpu=2,memory=1Gi"}},
		// Istio without the flag: ProxyConfig as JSON in PROXY_CONFIG.
		{k8s.MeshIstio, corev1.Container{Name: "istio-proxy", Image: "istio/proxyv2:1.28.0",
			Env:       []corev1.EnvVar{{Name: "PROXY_CONFIG", Value: `{"concurrency":3,"tracing":{}}`}},
			Resources: res("cpu=10m,memory=40Mi", "")},
			results.ContainerImage{Container: "istio-proxy", Image: "istio/proxyv2:1.28.0", Threads: 3, Requests: "cpu=10m,memory=40Mi"}},
		// Linkerd: its proxy runtime's cores (LINKERD2_PROXY_CORES), a
		// native sidecar.
		{k8s.MeshLinkerd, corev1.Container{Name: "linkerd-proxy", Image: "cr.l5d.io/linkerd/proxy:edge-25.1.1", RestartPolicy: &always,
			Env:       []corev1.EnvVar{{Name: "LINKERD2_PROXY_CORES", Value: "1"}},
			Resources: res("cpu=250m,memory=20Mi", "cpu=1,memory=250Mi")},
			results.ContainerImage{Container: "linkerd-proxy", Image: "cr.l5d.io/linkerd/proxy:edge-25.1.1", Threads: 1,
				Requests: "cpu=250m,memory=20Mi", Limits: "cpu=1,memory=250Mi"}},
		// App Mesh: Envoy with no thread count said.
		{k8s.MeshAppMesh, corev1.Container{Name: "envoy", Image: "aws-appmesh-envoy:v1.29", Resources: res("cpu=10m,memory=32Mi", "")},
			results.ContainerImage{Container: "envoy", Image: "aws-appmesh-envoy:v1.29", Requests: "cpu=10m,memory=32Mi"}},
	} {
		t.Run(tc.mesh, func(t *testing.T) {
			o, err := k8s.Options{Mesh: tc.mesh, Namespace: "bench", RunID: "r1"}.WithDefaults()
			if err != nil {
				t.Fatal(err)
			}
			target := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "loadgen-target-a", Namespace: "bench",
				Labels: map[string]string{k8s.LabelName: k8s.TargetName}}, Spec: corev1.PodSpec{NodeName: "n1",
				Containers: []corev1.Container{{Name: "http-httpbin", Image: "loadgen:latest"}}}}
			if tc.proxy.RestartPolicy != nil {
				target.Spec.InitContainers = append(target.Spec.InitContainers, tc.proxy)
			} else {
				target.Spec.Containers = append(target.Spec.Containers, tc.proxy)
			}
			k := &Coordinator{Cluster: &cluster.Cluster{Client: fake.NewClientset(target)}, Options: o}
			got := k.placement(context.Background(), 0, &batchv1.Job{})
			if len(got.Pods) != 1 || !reflect.DeepEqual(got.Pods[0].Proxies, []results.ContainerImage{tc.want}) {
				t.Errorf("placement %+v, want the target with %+v", got.Pods, tc.want)
			}
			// What loadgen asked is not what is recorded.
			asked := o.ProxySetups()
			if len(asked) == 0 || (asked[0].Threads == tc.want.Threads && asked[0].CPURequest+asked[0].MemoryRequest == tc.want.Requests) {
				t.Fatalf("the test's pod has the terms loadgen asked for (%+v): it tells nothing", asked)
			}
		})
	}
}
