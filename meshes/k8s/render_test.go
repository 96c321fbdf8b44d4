package k8s

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// renderCases are one rendering per mesh and mode.
var renderCases = []struct {
	name string
	o    Options
}{
	{"none", Options{Mesh: MeshNone}},
	{"istio-both", Options{Mesh: MeshIstio}},
	{"istio-serveronly", Options{Mesh: MeshIstio, Mode: ModeServerOnly}},
	{"istio-clientonly", Options{Mesh: MeshIstio, Mode: ModeClientOnly}},
	{"istio-revision-mtls", Options{Mesh: MeshIstio, Revision: "1-32", MTLS: true, Concurrency: 4}},
	{"istio-ambient", Options{Mesh: MeshIstioAmbient}},
	{"istio-waypoint", Options{Mesh: MeshIstioWaypoint, MTLS: true}},
	{"linkerd-both", Options{Mesh: MeshLinkerd}},
	{"linkerd-serveronly", Options{Mesh: MeshLinkerd, Mode: ModeServerOnly}},
	{"linkerd-clientonly", Options{Mesh: MeshLinkerd, Mode: ModeClientOnly}},
	{"appmesh-both", Options{Mesh: MeshAppMesh}},
	{"appmesh-serveronly", Options{Mesh: MeshAppMesh, Mode: ModeServerOnly}},
	{"appmesh-clientonly", Options{Mesh: MeshAppMesh, Mode: ModeClientOnly}},
	{"ingress-nginx", Options{Mesh: MeshIngressNginx}},
	{"ingress-nginx-configure", Options{Mesh: MeshIngressNginx, ConfigureController: true, Workers: 4}},
	{"ingress-traefik", Options{Mesh: MeshIngress, Class: "traefik"}},
	{"gateway-nginx", Options{Mesh: MeshGateway, Class: "nginx"}},
	{"gateway-vpc-lattice", Options{Mesh: MeshGateway, Class: "amazon-vpc-lattice", Namespace: "bench", Gateway: "bench-network"}},
	{"gateway-eg-routes", Options{Mesh: MeshGateway, Class: "eg", Routes: []string{RouteHTTP, RouteGRPC, RouteTCP}}},
	{"ingress-nginx-grpc", Options{Mesh: MeshIngressNginx, Routes: []string{RouteHTTP, RouteGRPC}}},
	{"sidecar-both", Options{Mesh: MeshSidecar}},
	{"sidecar-serveronly-nginx", Options{Mesh: MeshSidecar, Mode: ModeServerOnly, Sidecar: SidecarOptions{Proxy: ProxyNginx}}},
	{"sidecar-clientonly-caddy", Options{Mesh: MeshSidecar, Mode: ModeClientOnly, Sidecar: SidecarOptions{Proxy: ProxyCaddy}}},
	{"istio-ambient-placement", Options{Mesh: MeshIstioAmbient, TargetNode: "node-b",
		WorkerNodeSelector: map[string]string{"node-role": "load"},
		WorkerTolerations: []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "load", Effect: corev1.TaintEffectNoSchedule},
			{Key: "spot", Operator: corev1.TolerationOpExists}},
		WorkerRequests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")},
		WorkerLimits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("1Gi")}}},
	{"istio-hops3", Options{Mesh: MeshIstio, Hops: 3}},
	{"linkerd-hops3", Options{Mesh: MeshLinkerd, Hops: 3}},
	{"sidecar-hops3", Options{Mesh: MeshSidecar, Hops: 3}},
}

// Fixed TLS material keeps the ingress golden file stable; the API server
// checks the keys of a kubernetes.io/tls Secret, not the PEM inside.
var (
	testCert = []byte("-----BEGIN CERTIFICATE-----\nTEST\n-----END CERTIFICATE-----\n")
	testKey  = []byte("-----BEGIN PRIVATE KEY-----\nTEST\n-----END PRIVATE KEY-----\n")
)

func renderYAML(t *testing.T, o Options) []byte {
	t.Helper()
	o.TLSCert, o.TLSKey = testCert, testKey
	r, err := Render(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.WriteYAML(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRenderGolden(t *testing.T) {
	for _, tc := range renderCases {
		t.Run(tc.name, func(t *testing.T) {
			got := renderYAML(t, tc.o)
			path := filepath.Join("testdata", "render", tc.name+".yaml")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("rendering differs from %s (run with -update if intended):\n%s", path, got)
			}
		})
	}
}

// TestRenderDecodesStrictly decodes every golden rendering through the
// schemes with unknown and duplicate fields as errors, and checks that the
// typed objects carry every field of the YAML: a field a type does not know
// (Istio's specs ignore unknown fields) would be lost on the way back.
func TestRenderDecodesStrictly(t *testing.T) {
	s, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range renderCases {
		t.Run(tc.name, func(t *testing.T) {
			data := renderYAML(t, tc.o)
			objs, err := DecodeStrict(data)
			if err != nil {
				t.Fatal(err)
			}
			// Rendered YAML has no comments of its own; a ConfigMap's
			// config does (a proxy's '#' lines): kept as they are.
			docs := strings.Split(string(data), "\n---\n")
			if len(objs) != len(docs) {
				t.Fatalf("%d objects decoded from %d documents", len(objs), len(docs))
			}
			for i, obj := range objs {
				u, err := toUnstructured(s, obj)
				if err != nil {
					t.Fatal(err)
				}
				var want map[string]any
				if err := yaml.Unmarshal([]byte(docs[i]), &want); err != nil {
					t.Fatal(err)
				}
				back, err := yaml.Marshal(u.Object)
				if err != nil {
					t.Fatal(err)
				}
				var got map[string]any
				if err := yaml.Unmarshal(back, &got); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("document %d (%s) does not survive a typed round trip:\n%s\nbecame\n%s", i+1, ObjectRef(u), docs[i], back)
				}
				if l := u.GetLabels(); u.GetKind() != "ConfigMap" && (l[LabelRun] != DefaultRunID || l[LabelManagedBy] != ManagedBy) {
					t.Errorf("%s lacks the run's labels: %v", ObjectRef(u), l)
				}
			}
		})
	}
}

func TestDecodeStrictRefusesUnknownFields(t *testing.T) {
	for name, doc := range map[string]string{
		"core":    "apiVersion: v1\nkind: Service\nmetadata: {name: a}\nspec: {selectr: {a: b}}\n",
		"gateway": "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata: {name: a}\nspec: {gatewayClassName: x, listener: []}\n",
		"appmesh": "apiVersion: appmesh.k8s.aws/v1beta2\nkind: Mesh\nmetadata: {name: a}\nspec: {egresFilter: {type: ALLOW_ALL}}\n",
		"kind":    "apiVersion: v1\nkind: Pad\nmetadata: {name: a}\n",
	} {
		if _, err := DecodeStrict([]byte(doc)); err == nil {
			t.Errorf("%s: an unknown field or kind was accepted", name)
		}
	}
}

func TestRenderRefusesBadOptions(t *testing.T) {
	for _, o := range []Options{
		{Mesh: "consul"},
		{Mesh: MeshGateway},
		{Mesh: MeshNone, Mode: ModeServerOnly},
		{Mesh: MeshIstio, Mode: "sidecar"},
		{Mesh: MeshLinkerd, MTLS: true},
		{Mesh: MeshNone, Namespace: "Bad_NS"},
		{Mesh: MeshIstioAmbient, Class: "x"},
		{Mesh: MeshGateway, Class: ClassLattice, Via: ViaService}, // Lattice has no Service in the cluster
		{Mesh: MeshIstio, Via: ViaPublished},
		{Mesh: MeshGateway, Class: "eg", Via: "lb"},
	} {
		if _, err := Render(o, nil); err == nil {
			t.Errorf("%+v: accepted", o)
		}
	}
	_, err := Render(Options{Mesh: "consul"}, nil)
	if err == nil || !strings.Contains(err.Error(), strings.Join(Meshes, ", ")) {
		t.Errorf("unknown mesh: %v, want the list of meshes", err)
	}
}

// TestMTLSServerOnlyRefused checks that a STRICT PeerAuthentication makes the
// target's sidecar require mTLS, which workers without a sidecar
// (serveronly) cannot speak: every mesh request would fail.
//
// istio.io/api security/v1beta1 PeerAuthentication: "In sidecar mode,
// PeerAuthentication determines whether or not mTLS is allowed or
// required for connections to an Envoy proxy sidecar"; its STRICT mode:
// "Connection is an mTLS tunnel (TLS with client cert must be
// presented)."
func TestMTLSServerOnlyRefused(t *testing.T) {
	_, err := Render(Options{Mesh: MeshIstio, Mode: ModeServerOnly, MTLS: true}, nil)
	if err == nil || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "--mtls with --mode serveronly") {
		t.Fatalf("--mtls --mode serveronly: %v, want a one-line refusal", err)
	}
	for _, o := range []Options{{Mesh: MeshIstio, MTLS: true}, {Mesh: MeshIstio, Mode: ModeClientOnly, MTLS: true}, {Mesh: MeshIstioAmbient, MTLS: true}} {
		if _, err := Render(o, nil); err != nil {
			t.Errorf("%s %s --mtls: %v", o.Mesh, o.Mode, err)
		}
	}
}

func TestAppMeshNoticeOnce(t *testing.T) {
	r, err := Render(Options{Mesh: MeshAppMesh}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "2026-09-30") || !strings.Contains(r.Notes[0], "VPC Lattice") {
		t.Errorf("notes %q: want App Mesh's discontinuation once", r.Notes)
	}
	var u []*unstructured.Unstructured = r.Objects
	kinds := map[string]bool{}
	for _, o := range u {
		kinds[o.GetKind()] = true
	}
	for _, k := range []string{"Mesh", "VirtualNode", "VirtualRouter", "VirtualService"} {
		if !kinds[k] {
			t.Errorf("no %s rendered", k)
		}
	}
}

// TestIngressNginxNotice checks that ingress-nginx is retired, as App Mesh is
// discontinued, and its rendering says so once. Kubernetes Steering and
// Security Response Committees (kubernetes.io blog, 2026-01-29): "In
// March 2026, Kubernetes will retire Ingress NGINX … There will be no
// more releases for bug fixes, security patches, or any updates of any
// kind after the project is retired."
func TestIngressNginxNotice(t *testing.T) {
	r, err := Render(Options{Mesh: MeshIngressNginx}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Notes) != 1 || !strings.Contains(r.Notes[0], "retired ingress-nginx in March 2026") || !strings.Contains(r.Notes[0], "--mesh gateway") {
		t.Errorf("notes %q: want ingress-nginx's retirement once", r.Notes)
	}
	for _, o := range []Options{{Mesh: MeshIngress, Class: "traefik"}, {Mesh: MeshIstio}} {
		r, err := Render(o, nil)
		if err != nil || strings.Contains(strings.Join(r.Notes, " "), "retired") {
			t.Errorf("%s: notes %q %v", o.Mesh, r.Notes, err)
		}
	}
}
