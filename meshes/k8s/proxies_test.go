package k8s

import (
	"math"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"
)

// proxyTerms is what a sidecar gets, read from a pod's annotations by
// its mesh's documented rules.
type proxyTerms struct {
	threads              int // 0: the mesh's default, not set
	cpuRequest, cpuLimit string
	memRequest           string
}

// termsOf reads a pod's sidecar terms as each mesh documents its
// annotations:
//   - Istio: proxy.istio.io/config's concurrency ("The number of worker
//     threads to run"), sidecar.istio.io/proxyCPU, proxyCPULimit,
//     proxyMemory (istio.io/api annotation).
//   - Linkerd (reference/proxy-configuration, tasks/configuring-proxy-
//     concurrency): config.linkerd.io/proxy-cpu-limit "configures the proxy
//     injector to set an environment variable that controls the number of
//     CPU cores the proxy will use" — fractional values "rounded up to the
//     nearest whole number" — and "When the environment variable
//     configured by the proxy-cpu-limit annotation is unset, the proxy will
//     run only a single worker thread"; proxy-cpu-request,
//     proxy-memory-request.
//   - App Mesh (the controller's pkg/inject/constants.go): cpuRequest,
//     cpuLimit, memoryRequest; no per-pod concurrency.
func termsOf(t *testing.T, mesh string, p corev1.PodTemplateSpec) proxyTerms {
	t.Helper()
	a := p.Annotations
	switch mesh {
	case MeshIstio:
		var cfg struct {
			Concurrency int `json:"concurrency"`
		}
		if err := yaml.Unmarshal([]byte(a["proxy.istio.io/config"]), &cfg); err != nil {
			t.Fatal(err)
		}
		return proxyTerms{cfg.Concurrency, a["sidecar.istio.io/proxyCPU"], a["sidecar.istio.io/proxyCPULimit"], a["sidecar.istio.io/proxyMemory"]}
	case MeshLinkerd:
		threads := 1
		if v, ok := a["config.linkerd.io/proxy-cpu-limit"]; ok {
			q := resource.MustParse(v)
			threads = int(math.Ceil(q.AsApproximateFloat64()))
		}
		return proxyTerms{threads, a["config.linkerd.io/proxy-cpu-request"], a["config.linkerd.io/proxy-cpu-limit"], a["config.linkerd.io/proxy-memory-request"]}
	case MeshAppMesh:
		return proxyTerms{0, a["appmesh.k8s.aws/cpuRequest"], a["appmesh.k8s.aws/cpuLimit"], a["appmesh.k8s.aws/memoryRequest"]}
	}
	t.Fatalf("no sidecar mesh %s", mesh)
	return proxyTerms{}
}

// sidecarPods are the rendering's target and client pod templates.
func sidecarPods(t *testing.T, o Options) (server, client corev1.PodTemplateSpec) {
	t.Helper()
	r, err := Render(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range r.Objects {
		var tpl struct {
			Spec struct {
				Template corev1.PodTemplateSpec `json:"template"`
			} `json:"spec"`
		}
		switch {
		case u.GetKind() == "Deployment" && u.GetName() == TargetName, u.GetKind() == "Job":
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &tpl); err != nil {
				t.Fatal(err)
			}
			if u.GetKind() == "Job" {
				client = tpl.Spec.Template
			} else {
				server = tpl.Spec.Template
			}
		}
	}
	return server, client
}

// TestSidecarsOnEqualTerms checks that --concurrency, --proxy-cpu and
// --proxy-memory reach every sidecar mesh's proxies, client and server, as
// that mesh reads them: the same threads (where the mesh can set them), CPU
// request, CPU limit and memory request. Before, Linkerd ran "with a
// single runtime worker, no requests or limits" (its docs' default).
func TestSidecarsOnEqualTerms(t *testing.T) {
	o := Options{Concurrency: 3, ProxyCPU: "750m", ProxyMemory: "256Mi"}
	want := proxyTerms{3, "750m", "3", "256Mi"}
	for _, mesh := range []string{MeshIstio, MeshLinkerd, MeshAppMesh} {
		o.Mesh = mesh
		server, client := sidecarPods(t, o)
		for side, p := range map[string]corev1.PodTemplateSpec{"server": server, "client": client} {
			w := want
			if mesh == MeshAppMesh {
				w.threads = 0 // App Mesh's injector sets none: recorded as not set
			}
			if got := termsOf(t, mesh, p); got != w {
				t.Errorf("%s %s sidecar: %+v, want %+v", mesh, side, got, w)
			}
		}
		// What the run records is what was rendered.
		for _, ps := range o.withMesh(t).ProxySetups() {
			w := want
			if mesh == MeshAppMesh {
				w.threads = 0
			}
			if got := (proxyTerms{ps.Threads, ps.CPURequest, ps.CPULimit, ps.MemoryRequest}); got != w || len(ps.Set) == 0 {
				t.Errorf("%s recorded %+v, want %+v and how it was set", mesh, ps, w)
			}
		}
	}
}

func (o Options) withMesh(t *testing.T) Options {
	t.Helper()
	d, err := o.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestLinkerdOpaqueTCP checks that the TCP echo's port is opaque to Linkerd
// on the target pod and its Service, so that no connection waits for protocol
// detection (tcp-crr pays it on every one). Linkerd's proxy-configuration
// reference: config.linkerd.io/opaque-ports are "Ports that skip the
// proxy's protocol detection mechanism and are proxied opaquely"; its
// checks: "If a Pod marks a port as opaque by using the
// config.linkerd.io/opaque-ports annotation, then any Service which
// targets that port must also use the config.linkerd.io/opaque-ports
// annotation to mark that port as opaque."
func TestLinkerdOpaqueTCP(t *testing.T) {
	r, err := Render(Options{Mesh: MeshLinkerd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rd := readRendering(t, r.Objects)
	pod := rd.deployments[TargetName].Spec.Template.Annotations["config.linkerd.io/opaque-ports"]
	svc := rd.services[TargetName].Annotations["config.linkerd.io/opaque-ports"]
	for what, v := range map[string]string{"target pod": pod, "target Service": svc} {
		if !inPorts(v, PortTCP) {
			t.Errorf("the %s's opaque ports %q lack the TCP port %d", what, v, PortTCP)
		}
		for _, p := range []int{PortHTTP, PortGRPC} {
			if inPorts(v, p) {
				t.Errorf("the %s makes HTTP port %d opaque: Linkerd would carry it as TCP", what, p)
			}
		}
	}
}

// TestLinkerdNativeSidecarBeta checks both native-sidecar annotations.
// Linkerd's proxy-configuration reference:
// config.alpha.linkerd.io/proxy-enable-native-sidecar is "Deprecated in favor
// of config.beta.linkerd.io/proxy-enable-native-sidecar"; both are set, for
// Linkerd versions before and after the rename.
func TestLinkerdNativeSidecarBeta(t *testing.T) {
	_, client := sidecarPods(t, Options{Mesh: MeshLinkerd})
	for _, k := range []string{"config.beta.linkerd.io/proxy-enable-native-sidecar", "config.alpha.linkerd.io/proxy-enable-native-sidecar"} {
		if client.Annotations[k] != "true" {
			t.Errorf("the workers' pods lack %s: true: %v", k, client.Annotations)
		}
	}
}

// TestProxyKnobsRefused checks that the knobs of the sidecars loadgen injects
// do not apply to the proxies a mesh's install runs, and a quantity must
// parse.
func TestProxyKnobsRefused(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Mesh: MeshIstioAmbient, Concurrency: 4}, "apply to the sidecars"},
		{Options{Mesh: MeshGateway, Class: "eg", ProxyCPU: "2"}, "apply to the sidecars"},
		{Options{Mesh: MeshIstio, ProxyCPU: "two"}, "--proxy-cpu \"two\""},
	} {
		if _, err := Render(tc.o, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
	if ps := (Options{Mesh: MeshIstioAmbient}).withMesh(t).ProxySetups(); len(ps) != 1 || ps[0].Name != "ztunnel" || ps[0].Note == "" {
		t.Errorf("ambient's proxies recorded %+v, want ztunnel, its install's", ps)
	}
}
