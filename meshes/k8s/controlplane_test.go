package k8s

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
)

func TestParseControlPlane(t *testing.T) {
	for in, want := range map[string]ControlPlane{
		"istio-system/app=istiod":                       {Name: "istio-system", Namespace: "istio-system", Selector: "app=istiod"},
		"istiod=istio-system/app=istiod":                {Name: "istiod", Namespace: "istio-system", Selector: "app=istiod"},
		"cp=linkerd/linkerd.io/control-plane-component": {Name: "cp", Namespace: "linkerd", Selector: "linkerd.io/control-plane-component"},
		"eg=envoy-gateway-system/control-plane=envoy-gateway,app in (a,b)": {Name: "eg", Namespace: "envoy-gateway-system",
			Selector: "control-plane=envoy-gateway,app in (a,b)"},
	} {
		got, err := ParseControlPlane(in)
		if err != nil || got != want {
			t.Errorf("%q: %+v %v, want %+v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "istio-system", "istio-system/", "=istio-system/app=istiod", "Bad_NS/app=x",
		"x=istio-system/app in (", "/app=istiod", "N=ns/a=b"} {
		if cp, err := ParseControlPlane(in); err == nil || !strings.Contains(err.Error(), "--control-plane") {
			t.Errorf("%q: %+v %v, want an error naming the flag", in, cp, err)
		}
	}
}

func FuzzParseControlPlane(f *testing.F) {
	for _, s := range []string{"istio-system/app=istiod", "a=b/c", "=/", "x=y=z/w", "ns/a in (b", "a/b/c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cp, err := ParseControlPlane(s)
		if err != nil {
			return
		}
		// What it accepts, a run can use: a namespace, a name and a
		// selector the API server takes.
		if !dnsLabel.MatchString(cp.Namespace) || !dnsLabel.MatchString(cp.Name) {
			t.Fatalf("%q: %+v: a name or namespace that is not a DNS label", s, cp)
		}
		if _, err := labels.Parse(cp.Selector); err != nil {
			t.Fatalf("%q: selector %q: %v", s, cp.Selector, err)
		}
		if !strings.HasSuffix(s, cp.Selector) || !strings.Contains(s, cp.Namespace+"/") {
			t.Fatalf("%q: %+v is not what was written", s, cp)
		}
	})
}

// The defaults select what each install labels its control plane with:
//   - Istio's Helm chart (manifests/charts/istio-control/istio-discovery,
//     deployment.yaml) labels istiod's pods "app: istiod" in istio-system
//     ("istioctl install … the istiod deployment in the istio-system
//     namespace", istio.io Installation guides);
//   - Linkerd's control-plane chart labels each component's pods
//     "linkerd.io/control-plane-component: destination" (identity,
//     proxy-injector) in the linkerd namespace (linkerd2
//     charts/linkerd-control-plane/templates/destination.yaml …);
//   - the App Mesh controller's Helm chart (aws/eks-charts
//     stable/appmesh-controller) names its pods
//     "app.kubernetes.io/name: appmesh-controller", installed in
//     appmesh-system.
//   - Envoy Gateway's chart (envoyproxy/gateway
//     charts/gateway-helm/templates/envoy-gateway-deployment.yaml) labels
//     the controller's pods "control-plane: envoy-gateway", and its quick
//     start installs it with "helm install eg
//     oci://docker.io/envoyproxy/gateway-helm … -n envoy-gateway-system"
//     (gateway.envoyproxy.io, Quickstart), GatewayClass "eg"; its
//     proxies are labelled app.kubernetes.io/name=envoy, not selected;
//   - NGINX Gateway Fabric's chart (nginx/nginx-gateway-fabric
//     charts/nginx-gateway-fabric/templates/_helpers.tpl,
//     "nginx-gateway.selectorLabels") labels the control plane's pods
//     "app.kubernetes.io/name: {{ include "nginx-gateway.name" . }}", the
//     chart's name nginx-gateway-fabric, installed with "helm install ngf
//     … --create-namespace -n nginx-gateway" ("kubectl wait -n
//     nginx-gateway deployment/ngf-nginx-gateway-fabric"), GatewayClass
//     "nginx"; from 2.0 its nginx pods are the Gateway's own, labelled
//     app.kubernetes.io/name: <gateway>-nginx (its provisioner's
//     objects.go, AppNameLabel = resourceName), not selected; before 2.0
//     nginx ran in the controller's pod, which the run counts once
//     (run.findProxies);
//   - Cilium's chart (cilium/cilium install/kubernetes/cilium/templates/
//     cilium-operator/deployment.yaml) labels the operator's pods
//     "io.cilium/app: operator", in the chart's namespace, kube-system in
//     Cilium's install guides; the operator turns Gateways and Ingresses
//     into the agents' Envoy configuration.
//
// ingress-nginx's controller (/nginx-ingress-controller runs nginx as
// its child) and Traefik (one binary that watches the API and proxies)
// are their proxies too: no control plane apart, which the run says.
func TestDefaultControlPlanes(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Mesh: MeshIstio}, "istiod=istio-system/app=istiod"},
		{Options{Mesh: MeshIstioAmbient}, "istiod=istio-system/app=istiod"},
		{Options{Mesh: MeshIstioWaypoint}, "istiod=istio-system/app=istiod"},
		{Options{Mesh: MeshLinkerd}, "linkerd-control-plane=linkerd/linkerd.io/control-plane-component"},
		{Options{Mesh: MeshAppMesh}, "appmesh-controller=appmesh-system/app.kubernetes.io/name=appmesh-controller"},
		{Options{Mesh: MeshGateway, Class: "istio"}, "istiod=istio-system/app=istiod"},
		{Options{Mesh: MeshGateway, Class: "eg"}, "envoy-gateway=envoy-gateway-system/control-plane=envoy-gateway"},
		{Options{Mesh: MeshGateway, Class: "nginx"}, "nginx-gateway-fabric=nginx-gateway/app.kubernetes.io/name=nginx-gateway-fabric"},
		{Options{Mesh: MeshGateway, Class: "cilium"}, "cilium-operator=kube-system/io.cilium/app=operator"},
		{Options{Mesh: MeshIngress, Class: "cilium"}, "cilium-operator=kube-system/io.cilium/app=operator"},
		{Options{Mesh: MeshGateway, Class: "traefik"}, ""},
		{Options{Mesh: MeshIngress, Class: "traefik"}, ""},
		{Options{Mesh: MeshIngress, Class: "nginx"}, ""}, // an IngressClass nginx is ingress-nginx's, not NGINX Gateway Fabric's
		{Options{Mesh: MeshSidecar}, ""},
		{Options{Mesh: MeshIngressNginx}, ""},
		{Options{Mesh: MeshNone}, ""},
	} {
		mesh := tc.o.Mesh + " " + tc.o.Class
		var got []string
		cps, err := tc.o.ControlPlanes()
		for _, cp := range cps {
			got = append(got, cp.Name+"="+cp.Namespace+"/"+cp.Selector)
		}
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("--mesh %s: %q %v, want %q", mesh, got, err, tc.want)
		}
		// Each default parses as the flag would, and a run may read its
		// pods (with metrics-server and with Prometheus).
		for _, g := range got {
			if _, err := ParseControlPlane(g); err != nil {
				t.Errorf("--mesh %s: its default %q does not parse: %v", mesh, g, err)
			}
		}
		for _, cp := range cps {
			for _, m := range []string{MetricsAPI, MetricsPrometheus} {
				o := tc.o
				o.Metrics = m
				if !Allows(ForRun, o, "", "pods", "list", cp.Namespace, "") || (m == MetricsAPI && !Allows(ForRun, o, "metrics.k8s.io", "pods", "list", cp.Namespace, "")) {
					t.Errorf("--mesh %s (%s): no row lets the run list the pods of %s in %s", mesh, m, cp.Name, cp.Namespace)
				}
			}
		}
		// A run that records none by default says why, once, and names
		// the flag; one that records one, or was told, says nothing.
		note := ControlPlaneNote(tc.o)
		switch {
		case tc.want == "" && tc.o.Published() && !strings.Contains(note, "--control-plane"):
			t.Errorf("--mesh %s: no control plane by default, and the note %q names no --control-plane", mesh, note)
		case (tc.want != "" || !tc.o.Published()) && note != "":
			t.Errorf("--mesh %s: note %q, want none", mesh, note)
		}
		if told := tc.o; told.Published() {
			told.ControlPlane = []string{"c=ns/app=c"}
			if n := ControlPlaneNote(told); n != "" {
				t.Errorf("--mesh %s --control-plane c=ns/app=c: note %q", mesh, n)
			}
		}
	}
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Mesh: MeshIngressNginx}, "counted once, in the ingress-nginx figure"},
		{Options{Mesh: MeshGateway, Class: "traefik"}, "counted once, in the gateway figure"},
		{Options{Mesh: MeshIngress, Class: "haproxy"}, "no documented control plane"},
		{Options{Mesh: MeshGateway, Class: ClassLattice}, "outside the cluster"},
	} {
		if n := ControlPlaneNote(tc.o); !strings.Contains(n, tc.want) {
			t.Errorf("--mesh %s --class %s: note %q, want %q", tc.o.Mesh, tc.o.Class, n, tc.want)
		}
	}
	if cps, err := (Options{Mesh: MeshIstio, ControlPlane: []string{NoControlPlane}}).ControlPlanes(); err != nil || len(cps) != 0 {
		t.Errorf("--control-plane none: %v %v", cps, err)
	}
	for _, bad := range [][]string{{"none", "a/b=c"}, {"x=a/b=c", "x=d/e=f"}, {"a"}} {
		if _, err := (Options{Mesh: MeshIstio, ControlPlane: bad}).WithDefaults(); err == nil {
			t.Errorf("--control-plane %q: accepted", bad)
		}
	}
}

// --control-plane's help says each default DefaultControlPlanes gives,
// in the words it has always had.
func TestDefaultControlPlanesHelp(t *testing.T) {
	help := DefaultControlPlanesHelp()
	const was = "the mesh's own: istiod=istio-system/app=istiod; Linkerd's in linkerd; appmesh-controller in appmesh-system; " +
		"for gateway classes eg, nginx and cilium their controller's pods (envoy-gateway-system, nginx-gateway, kube-system); " +
		"ingress-nginx and traefik: none apart, their controller is their proxy"
	if help != was {
		t.Errorf("help\n%s\nwant\n%s", help, was)
	}
	for _, mesh := range Meshes {
		for _, class := range []string{"", ClassEnvoyGateway, ClassNginxGatewayFabric, ClassCilium, ClassTraefik, "istio"} {
			for _, cp := range DefaultControlPlanes(Options{Mesh: mesh, Class: class}) {
				if !strings.Contains(help, cp.Namespace) {
					t.Errorf("--mesh %s --class %q: the help does not name %s's namespace %s", mesh, class, cp.Name, cp.Namespace)
				}
			}
		}
	}
}
