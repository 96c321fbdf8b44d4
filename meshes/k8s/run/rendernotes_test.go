package run

import (
	"slices"
	"testing"

	"loadgen/meshes/k8s"
)

// ControllerRenderNotes name the ConfigMap k8s render renders for
// --configure-controller, the controller's own (k8s.IngressControllerConfigMap
// in its namespace), and say nothing without the flag.
func TestControllerRenderNotes(t *testing.T) {
	for _, tc := range []struct {
		o    k8s.Options
		want []string
	}{
		{k8s.Options{Mesh: k8s.MeshIngressNginx, IngressNamespace: "ingress-nginx"}, nil},
		{k8s.Options{Mesh: k8s.MeshIngressNginx, IngressNamespace: "ingress-nginx", ConfigureController: true}, []string{
			"note: the ConfigMap ingress-nginx/ingress-nginx-controller is the controller's, shared by every Ingress; " +
				"apply it with `kubectl apply --server-side --field-manager=loadgen` and put its keys back yourself " +
				"(`loadgen k8s run --configure-controller` does both, and gives the keys back to their owners)",
			"note: each change of ConfigMap ingress-nginx/ingress-nginx-controller reloads nginx in every pod of its controller, " +
				"for every Ingress it serves, other tenants' too: once now, once when it is put back",
		}},
		{k8s.Options{Mesh: k8s.MeshIngressNginx, IngressNamespace: "edge", ConfigureController: true}, []string{
			"note: the ConfigMap edge/" + k8s.IngressControllerConfigMap + " is the controller's, shared by every Ingress; " +
				"apply it with `kubectl apply --server-side --field-manager=loadgen` and put its keys back yourself " +
				"(`loadgen k8s run --configure-controller` does both, and gives the keys back to their owners)",
			ReloadNotice("ConfigMap edge/" + k8s.IngressControllerConfigMap),
		}},
	} {
		if got := ControllerRenderNotes(tc.o); !slices.Equal(got, tc.want) {
			t.Errorf("ControllerRenderNotes(%s, configure %v):\n%q\nwant\n%q", tc.o.IngressNamespace, tc.o.ConfigureController, got, tc.want)
		}
	}
}
