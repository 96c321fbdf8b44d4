package k8s

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// sidecarRendering renders --mesh sidecar with a client Job of one
// worker, and reads back the target's pod, the worker's and the kinds.
func sidecarRendering(t *testing.T, o Options) (target, client corev1.PodSpec, objs []*unstructured.Unstructured) {
	t.Helper()
	r, err := Render(o, &JobSpec{Name: ClientName, Workers: 1, Connections: 1, Threads: 1, RunArgs: []string{"http://x"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range r.Objects {
		switch u.GetKind() {
		case "Deployment":
			var d appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &d); err != nil {
				t.Fatal(err)
			}
			target = d.Spec.Template.Spec
		case "Job":
			var j batchv1.Job
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &j); err != nil {
				t.Fatal(err)
			}
			client = j.Spec.Template.Spec
		}
	}
	return target, client, r.Objects
}

// captured is what `loadgen mesh capture`'s flags in a pod's init
// container make of a connection, by istio-iptables' rules: inbound to
// port in, outbound to port out.
type captureFlags map[string]string

func captureOf(t *testing.T, spec corev1.PodSpec) captureFlags {
	t.Helper()
	for _, c := range spec.InitContainers {
		if c.Name != ContainerCapture {
			continue
		}
		if len(c.Args) < 2 || c.Args[0] != "mesh" || c.Args[1] != "capture" || len(c.Args)%2 != 0 {
			t.Fatalf("capture args %q", c.Args)
		}
		f := captureFlags{"--include-outbound-ip-ranges": "*"}
		for i := 2; i < len(c.Args); i += 2 {
			f[c.Args[i]] = c.Args[i+1]
		}
		return f
	}
	return nil
}

func (f captureFlags) inbound(port int) bool {
	return f != nil && !inPorts(f["--exclude-inbound-ports"], port)
}

func (f captureFlags) outbound(port int) bool {
	switch {
	case f == nil || inPorts(f["--exclude-outbound-ports"], port):
		return false
	case f["--include-outbound-ports"] != "" && inPorts(f["--include-outbound-ports"], port):
		return true
	}
	return f["--include-outbound-ip-ranges"] == "*"
}

// hasProxy tells whether the pod runs the proxy, and as a native sidecar.
func hasProxy(spec corev1.PodSpec) (has, native bool) {
	for _, c := range spec.InitContainers {
		if c.Name == ContainerSidecar {
			return true, c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways
		}
	}
	for _, c := range spec.Containers {
		if c.Name == ContainerSidecar {
			return true, false
		}
	}
	return false, false
}

// TestSidecarMeshCrosses checks that per mode, the mesh port crosses the
// proxies the mode names, the direct port none, and each pod with a capture
// has the proxy the capture sends connections to, native where it can be.
func TestSidecarMeshCrosses(t *testing.T) {
	for _, tc := range []struct {
		mode           string
		client, server bool
	}{
		{ModeBoth, true, true}, {ModeServerOnly, false, true}, {ModeClientOnly, true, false}, {ModeNone, false, false},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			target, client, _ := sidecarRendering(t, Options{Mesh: MeshSidecar, Mode: tc.mode})
			tc2, cc := captureOf(t, target), captureOf(t, client)
			for _, p := range []struct {
				port           int
				client, server bool
			}{{PortHTTP, tc.client, tc.server}, {PortHTTPDirect, false, false}} {
				if got := cc.outbound(p.port); got != p.client {
					t.Errorf("port %d: the worker's proxy crossed %v, want %v", p.port, got, p.client)
				}
				if got := tc2.inbound(p.port); got != p.server {
					t.Errorf("port %d: the target's proxy crossed %v, want %v", p.port, got, p.server)
				}
			}
			// The worker's other connections (the API server's clock on 443)
			// are not captured: the proxy forwards to the target only.
			if cc.outbound(443) {
				t.Error("the worker's connections to port 443 are captured")
			}
			for _, side := range []struct {
				name string
				spec corev1.PodSpec
				want bool
			}{{"target", target, tc.server}, {"worker", client, tc.client}} {
				has, native := hasProxy(side.spec)
				if has != side.want || (captureOf(t, side.spec) != nil) != side.want {
					t.Errorf("%s: proxy %v, capture %v, want %v", side.name, has, captureOf(t, side.spec) != nil, side.want)
				}
				if has && !native {
					t.Errorf("%s: the proxy is not a native sidecar", side.name)
				}
			}
		})
	}
}

// TestSidecarMeshProbes checks that the app's HTTP probes on captured ports
// become TCP ones (no request of the proxy's own); the direct port's stay.
func TestSidecarMeshProbes(t *testing.T) {
	target, _, _ := sidecarRendering(t, Options{Mesh: MeshSidecar})
	for _, c := range target.Containers {
		p := c.ReadinessProbe
		if p == nil {
			continue
		}
		port := c.Ports[0].ContainerPort
		switch {
		case port == PortHTTPDirect && p.HTTPGet == nil:
			t.Errorf("%s: the direct port's probe is no longer HTTP", c.Name)
		case port != PortHTTPDirect && p.HTTPGet != nil:
			t.Errorf("%s: an HTTP probe on captured port %d", c.Name, port)
		}
	}
	plain, _, _ := sidecarRendering(t, Options{Mesh: MeshSidecar, Mode: ModeClientOnly})
	for _, c := range plain.Containers {
		if c.Ports[0].ContainerPort == PortHTTP && c.ReadinessProbe.HTTPGet == nil {
			t.Errorf("clientonly: the target has no proxy, its HTTP probe changed")
		}
	}
}

// TestSidecarMeshObjects checks the objects of a sidecar mesh: the proxy's
// config per proxy, its image, and the identities with --mtls.
func TestSidecarMeshObjects(t *testing.T) {
	for _, p := range SidecarProxies {
		target, _, objs := sidecarRendering(t, Options{Mesh: MeshSidecar, Sidecar: SidecarOptions{Proxy: p}, MTLS: true, Namespace: "bench"})
		var cm, secret *unstructured.Unstructured
		for _, u := range objs {
			switch u.GetKind() {
			case "ConfigMap":
				cm = u
			case "Secret":
				secret = u
			}
		}
		if cm == nil || secret == nil {
			t.Fatalf("%s: ConfigMap %v, Secret %v", p, cm != nil, secret != nil)
		}
		conf, _, _ := unstructured.NestedString(cm.Object, "data", SidecarConfigFile(p))
		if !strings.Contains(conf, "loadgen-target.bench.svc.cluster.local:8080") || !strings.Contains(conf, "15006") {
			t.Errorf("%s: the config has no upstream Service or inbound port:\n%s", p, conf)
		}
		data, _, _ := unstructured.NestedStringMap(secret.Object, "data")
		for _, k := range []string{"ca.crt", "server.crt", "server.key", "server.pem", "client.crt", "client.key", "client.pem"} {
			if data[k] == "" {
				t.Errorf("%s: the Secret has no %s", p, k)
			}
		}
		for _, c := range target.InitContainers {
			if c.Name == ContainerSidecar && (c.Image != DefaultProxyImages[p] || c.Command[0] != p || *c.SecurityContext.RunAsUser != 1337) {
				t.Errorf("%s: proxy container %s %q as %d", p, c.Image, c.Command, *c.SecurityContext.RunAsUser)
			}
		}
	}
	_, _, objs := sidecarRendering(t, Options{Mesh: MeshSidecar, Mode: ModeNone})
	for _, u := range objs {
		if k := u.GetKind(); k == "ConfigMap" || k == "Secret" {
			t.Errorf("mode none renders a %s", k)
		}
	}
	target, _, _ := sidecarRendering(t, Options{Mesh: MeshSidecar, Sidecar: SidecarOptions{Image: "registry.example/haproxy:2.9"}})
	if has, _ := hasProxy(target); !has || target.InitContainers[1].Image != "registry.example/haproxy:2.9" {
		t.Errorf("--proxy-image not used: %+v", target.InitContainers)
	}
}

// TestSidecarMeshNoNative checks that without native sidecars the target's
// proxy is an ordinary container, and a worker cannot have one.
func TestSidecarMeshNoNative(t *testing.T) {
	target, _, _ := sidecarRendering(t, Options{Mesh: MeshSidecar, Mode: ModeServerOnly, Sidecar: SidecarOptions{NoNative: true}})
	if has, native := hasProxy(target); !has || native {
		t.Errorf("proxy %v native %v, want an ordinary container", has, native)
	}
	if _, err := Render(Options{Mesh: MeshSidecar, Sidecar: SidecarOptions{NoNative: true}}, nil); err == nil || !strings.Contains(err.Error(), "native sidecars") {
		t.Errorf("mode both without native sidecars: %v", err)
	}
}

func TestSidecarMeshRefuses(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Mesh: MeshSidecar, Sidecar: SidecarOptions{Proxy: "envoy"}}, `unknown proxy "envoy"`},
		{Options{Mesh: MeshIstio, Sidecar: SidecarOptions{Proxy: "nginx"}}, "apply to --mesh sidecar"},
		{Options{Mesh: MeshIstio, Mode: ModeNone}, "mode none applies to --mesh sidecar"},
		{Options{Mesh: MeshSidecar, Mode: ModeServerOnly, MTLS: true}, "--mode both"},
		{Options{Mesh: MeshSidecar, Mode: ModeClientOnly, MTLS: true}, "--mode both"},
	} {
		if _, err := Render(tc.o, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
	if SidecarContainer(MeshSidecar) != ContainerSidecar {
		t.Errorf("the presence check looks for %q", SidecarContainer(MeshSidecar))
	}
	if !slices.Contains(Meshes, MeshSidecar) || !slices.Contains(Modes, ModeNone) {
		t.Error("--mesh sidecar or --mode none not listed")
	}
}

func TestSidecarMeshCheckLoad(t *testing.T) {
	o := Options{Mesh: MeshSidecar}
	steps := []Step{{Path: "mesh", URL: "http://target:8080"}, {Path: "direct", URL: "http://target:8081"}}
	if err := o.CheckLoad(Load{}, steps); err != nil {
		t.Fatal(err)
	}
	if err := o.CheckLoad(Load{Protocol: "grpc"}, steps); err == nil || !strings.Contains(err.Error(), "HTTP/1.1") {
		t.Errorf("grpc: %v", err)
	}
	if err := o.CheckLoad(Load{}, []Step{{Path: "tls", URL: "https://target:8080"}}); err == nil || !strings.Contains(err.Error(), "path tls") {
		t.Errorf("https: %v", err)
	}
	if err := (Options{Mesh: MeshIstio}).CheckLoad(Load{Protocol: "grpc"}, steps); err != nil {
		t.Errorf("istio: %v", err)
	}
}

// --proxy-cpu and --proxy-memory, which --mesh sidecar does not apply yet,
// are refused rather than ignored.
func TestSidecarMeshRefusesProxyResources(t *testing.T) {
	for _, o := range []Options{{Mesh: MeshSidecar, ProxyCPU: "2"}, {Mesh: MeshSidecar, ProxyMemory: "1Gi"}} {
		if _, err := o.WithDefaults(); err == nil || !strings.Contains(err.Error(), "--mesh sidecar") {
			t.Errorf("%+v: %v, want a refusal naming --mesh sidecar", o, err)
		}
	}
	if o, err := (Options{Mesh: MeshSidecar}).WithDefaults(); err != nil || o.Concurrency != DefaultConcurrency {
		t.Errorf("defaults: %+v %v, want concurrency %d and no error", o, err, DefaultConcurrency)
	}
}
