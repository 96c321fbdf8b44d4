package k8s

import (
	"testing"

	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// renderedIngresses are a rendering's Ingresses, by name.
func renderedIngresses(t *testing.T, o Options) map[string]networkingv1.Ingress {
	t.Helper()
	o.TLSCert, o.TLSKey = testCert, testKey
	r, err := Render(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]networkingv1.Ingress{}
	for _, u := range r.Objects {
		if u.GetKind() != "Ingress" {
			continue
		}
		var ing networkingv1.Ingress
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &ing); err != nil {
			t.Fatal(err)
		}
		out[ing.Name] = ing
	}
	return out
}

// TestIngressNginxNoRedirect checks that loadgen's Ingress has TLS, and the
// HTTP steps go to the controller's port 80, so ingress-nginx must not answer
// them with its redirect.
//
// ingress-nginx, docs/user-guide/tls.md ("Server-side HTTPS enforcement
// through redirect"): "By default the controller redirects HTTP clients
// to the HTTPS port 443 using a 308 Permanent Redirect response if TLS is
// enabled for that Ingress. This can be disabled globally using
// `ssl-redirect: "false"` in the NGINX config map, or per-Ingress with the
// `nginx.ingress.kubernetes.io/ssl-redirect: "false"` annotation in the
// particular resource."
func TestIngressNginxNoRedirect(t *testing.T) {
	ings := renderedIngresses(t, Options{Mesh: MeshIngressNginx})
	ing, ok := ings[TargetName]
	if !ok {
		t.Fatalf("no Ingress %s rendered", TargetName)
	}
	if len(ing.Spec.TLS) == 0 {
		t.Fatal("the Ingress has no TLS: the case this test is about is gone")
	}
	if got := ing.Annotations["nginx.ingress.kubernetes.io/ssl-redirect"]; got != "false" {
		t.Errorf("Ingress %s has TLS and nginx.ingress.kubernetes.io/ssl-redirect %q: ingress-nginx answers its HTTP steps with 308", ing.Name, got)
	}
}
