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
func TestDefaultControlPlanes(t *testing.T) {
	for mesh, want := range map[string]string{
		MeshIstio:         "istiod=istio-system/app=istiod",
		MeshIstioAmbient:  "istiod=istio-system/app=istiod",
		MeshIstioWaypoint: "istiod=istio-system/app=istiod",
		MeshLinkerd:       "linkerd-control-plane=linkerd/linkerd.io/control-plane-component",
		MeshAppMesh:       "appmesh-controller=appmesh-system/app.kubernetes.io/name=appmesh-controller",
		MeshSidecar:       "",
		MeshIngressNginx:  "",
		MeshNone:          "",
	} {
		var got []string
		cps, err := Options{Mesh: mesh}.ControlPlanes()
		for _, cp := range cps {
			got = append(got, cp.Name+"="+cp.Namespace+"/"+cp.Selector)
		}
		if err != nil || strings.Join(got, " ") != want {
			t.Errorf("--mesh %s: %q %v, want %q", mesh, got, err, want)
		}
		// Each default parses as the flag would.
		for _, g := range got {
			if _, err := ParseControlPlane(g); err != nil {
				t.Errorf("--mesh %s: its default %q does not parse: %v", mesh, g, err)
			}
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
