package k8s

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"loadgen/meshes/k8s/appmesh"
)

// rendered is a rendering read back as the cluster would see it: what
// each mesh's injector and CNI read when a pod is created.
type rendered struct {
	ns          corev1.Namespace
	deployments map[string]appsv1.Deployment // by the pod label app.kubernetes.io/name
	services    map[string]corev1.Service
	targetNode  *appmesh.VirtualNode
}

func readRendering(t *testing.T, objs []*unstructured.Unstructured) rendered {
	t.Helper()
	r := rendered{deployments: map[string]appsv1.Deployment{}, services: map[string]corev1.Service{}}
	from := func(u *unstructured.Unstructured, into any) {
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
			t.Fatalf("%s: %v", ObjectRef(u), err)
		}
	}
	for _, u := range objs {
		switch u.GetKind() {
		case "Namespace":
			from(u, &r.ns)
		case "Deployment":
			var d appsv1.Deployment
			from(u, &d)
			r.deployments[d.Name] = d
		case "Service":
			var s corev1.Service
			from(u, &s)
			r.services[s.Name] = s
		case "VirtualNode":
			if u.GetName() == TargetName {
				r.targetNode = &appmesh.VirtualNode{}
				from(u, r.targetNode)
			}
		}
	}
	return r
}

// inPorts tells whether port is in a comma-separated port list.
func inPorts(list string, port int) bool {
	return slices.Contains(strings.Split(strings.ReplaceAll(list, " ", ""), ","), strconv.Itoa(port))
}

// crosses lists the proxies a request of the client pod to rawURL
// crosses, by each mesh's documented rules for its labels and annotations
// (Istio's traffic.sidecar.istio.io/*, Linkerd's config.linkerd.io/skip-*,
// the App Mesh controller's egressIgnoredPorts (default 22) and ports
// (default: the VirtualNode's listeners), ambient's dataplane-mode).
func (r rendered) crosses(t *testing.T, mesh string, client corev1.PodTemplateSpec, rawURL string) []string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(u.Port())
	svcName, _, _ := strings.Cut(u.Hostname(), ".")
	svc, ok := r.services[svcName]
	if !ok || u.Hostname() != svcName+"."+r.ns.Name+".svc.cluster.local" {
		// Not a Service of the rendering: the ingress controller or the gateway.
		return []string{mesh}
	}
	var server *appsv1.Deployment
	for _, d := range r.deployments {
		if d.Spec.Template.Labels[LabelName] == svc.Spec.Selector[LabelName] {
			server = &d
		}
	}
	if server == nil {
		t.Fatalf("Service %s selects no Deployment of the rendering", svcName)
	}
	sp := server.Spec.Template
	var out []string
	nsl, nsa := r.ns.Labels, r.ns.Annotations
	switch mesh {
	case MeshIstio:
		injected := func(p corev1.PodTemplateSpec) bool {
			if v, ok := p.Labels[labelIstioInject]; ok {
				return v == "true"
			}
			return nsl[labelIstioNSInject] == "enabled" || nsl[labelIstioRev] != ""
		}
		if injected(client) && !inPorts(client.Annotations[annIstioExcludeOut], port) {
			out = append(out, "client istio-proxy")
		}
		if injected(sp) && !inPorts(sp.Annotations[annIstioExcludeIn], port) {
			out = append(out, "server istio-proxy")
		}
	case MeshLinkerd:
		injected := func(p corev1.PodTemplateSpec) bool {
			if v, ok := p.Annotations[annLinkerdInject]; ok {
				return v == "enabled"
			}
			return nsa[annLinkerdInject] == "enabled"
		}
		if injected(client) && !inPorts(client.Annotations[annLinkerdSkipOut], port) {
			out = append(out, "client linkerd-proxy")
		}
		if injected(sp) && !inPorts(sp.Annotations[annLinkerdSkipIn], port) {
			out = append(out, "server linkerd-proxy")
		}
	case MeshAppMesh:
		injected := func(p corev1.PodTemplateSpec) bool {
			if v, ok := p.Annotations[annAppMeshInject]; ok {
				return v == "enabled"
			}
			return nsl[annAppMeshInject] == "enabled"
		}
		egress := "22"
		if v, ok := client.Annotations[annAppMeshEgressIgn]; ok {
			egress = v
		}
		if injected(client) && !inPorts(egress, port) {
			out = append(out, "client envoy")
		}
		appPorts, ok := sp.Annotations[annAppMeshPorts]
		if !ok && r.targetNode != nil {
			var ps []string
			for _, l := range r.targetNode.Spec.Listeners {
				ps = append(ps, strconv.FormatInt(l.PortMapping.Port, 10))
			}
			appPorts = strings.Join(ps, ",")
		}
		if injected(sp) && inPorts(appPorts, port) {
			out = append(out, "server envoy")
		}
	case MeshIstioAmbient, MeshIstioWaypoint:
		enrolled := func(p corev1.PodTemplateSpec) bool {
			if v, ok := p.Labels[LabelDataplaneMode]; ok {
				return v == "ambient"
			}
			return nsl[LabelDataplaneMode] == "ambient"
		}
		if enrolled(client) {
			out = append(out, "client ztunnel")
			if wp := svc.Labels[labelUseWaypoint]; wp != "none" && (wp != "" || nsl[labelUseWaypoint] != "") {
				out = append(out, "waypoint")
			}
		}
		if enrolled(sp) {
			out = append(out, "server ztunnel")
		}
	}
	return out
}

// TestBaselineCrossesNoProxy checks that for every mesh and mode, the mesh
// path (target:8080) crosses the proxies the mode places and the direct paths
// (target:8081, and gRPC's 9091 and raw TCP's 9001, as istio/tools leaves
// an HTTP, a gRPC and a TCP port out) cross none, read from the rendered
// objects by each mesh's rules. Removing any exclusion makes a direct
// path cross a proxy and fails this test.
func TestBaselineCrossesNoProxy(t *testing.T) {
	cases := []struct {
		o    Options
		mesh []string // what the mesh path crosses
	}{
		{Options{Mesh: MeshNone}, nil},
		{Options{Mesh: MeshIstio}, []string{"client istio-proxy", "server istio-proxy"}},
		{Options{Mesh: MeshIstio, Mode: ModeServerOnly}, []string{"server istio-proxy"}},
		{Options{Mesh: MeshIstio, Mode: ModeClientOnly}, []string{"client istio-proxy"}},
		{Options{Mesh: MeshIstio, Revision: "1-32"}, []string{"client istio-proxy", "server istio-proxy"}},
		{Options{Mesh: MeshIstioAmbient}, []string{"client ztunnel", "server ztunnel"}},
		{Options{Mesh: MeshIstioWaypoint}, []string{"client ztunnel", "waypoint", "server ztunnel"}},
		{Options{Mesh: MeshLinkerd}, []string{"client linkerd-proxy", "server linkerd-proxy"}},
		{Options{Mesh: MeshLinkerd, Mode: ModeServerOnly}, []string{"server linkerd-proxy"}},
		{Options{Mesh: MeshLinkerd, Mode: ModeClientOnly}, []string{"client linkerd-proxy"}},
		{Options{Mesh: MeshAppMesh}, []string{"client envoy", "server envoy"}},
		{Options{Mesh: MeshAppMesh, Mode: ModeServerOnly}, []string{"server envoy"}},
		{Options{Mesh: MeshAppMesh, Mode: ModeClientOnly}, []string{"client envoy"}},
		{Options{Mesh: MeshIngressNginx}, []string{MeshIngressNginx}},
		{Options{Mesh: MeshIngress, Class: "traefik"}, []string{MeshIngress}},
		{Options{Mesh: MeshGateway, Class: "traefik"}, []string{MeshGateway}},
	}
	for _, c := range cases {
		name := c.o.Mesh + "-" + c.o.Mode + c.o.Revision
		t.Run(name, func(t *testing.T) {
			o, err := c.o.WithDefaults()
			if err != nil {
				t.Fatal(err)
			}
			o.TLSCert, o.TLSKey = testCert, testKey
			for _, p := range []struct {
				url  string
				want []string
			}{{"http://target:8080/get", c.mesh}, {"http://target:8081/get", nil}, {"http://target:9091", nil}, {"tcp://target:9001", nil}} {
				resolved, err := o.resolve(p.url, Addresses{HTTP: "gw.example", GRPC: "gw.example"})
				if err != nil {
					t.Fatal(err)
				}
				r, err := Render(o, &JobSpec{Name: ClientName, Workers: 1, Connections: 1, Threads: 1,
					RunArgs: []string{resolved}, Direct: DirectURL(p.url)})
				if err != nil {
					t.Fatal(err)
				}
				var job batchv1.Job
				if err := runtime.DefaultUnstructuredConverter.FromUnstructured(r.Objects[len(r.Objects)-1].Object, &job); err != nil {
					t.Fatal(err)
				}
				got := readRendering(t, r.Objects[:len(r.Objects)-1]).crosses(t, o.Mesh, job.Spec.Template, resolved)
				if !slices.Equal(got, p.want) {
					t.Errorf("%s (%s) crosses %v, want %v", p.url, resolved, got, p.want)
				}
			}
		})
	}
}
