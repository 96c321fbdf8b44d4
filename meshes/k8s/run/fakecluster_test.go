package run

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	"loadgen/meshes/k8s/cluster"
)

// resettable is a fixed REST mapper as the Cluster's (which discovery
// resets).
type resettable struct{ meta.RESTMapper }

func (resettable) Reset() {}

// fakeKinds are the kinds the fake cluster serves: namespaced unless
// listed in clusterScoped.
var fakeKinds = []schema.GroupVersionKind{
	{Group: "appmesh.k8s.aws", Version: "v1beta2", Kind: "Mesh"},
	{Group: "appmesh.k8s.aws", Version: "v1beta2", Kind: "VirtualNode"},
	{Group: "appmesh.k8s.aws", Version: "v1beta2", Kind: "VirtualRouter"},
	{Group: "appmesh.k8s.aws", Version: "v1beta2", Kind: "VirtualService"},
	{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "Gateway"},
	{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "GatewayClass"},
	{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"},
	{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "GRPCRoute"},
	{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "TCPRoute"},
	{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"},
	{Group: "networking.k8s.io", Version: "v1", Kind: "IngressClass"},
}

var clusterScoped = map[string]bool{"Mesh": true, "GatewayClass": true, "IngressClass": true}

// fakeCluster is a Cluster whose typed client holds typed objects and
// whose dynamic client holds dyn, with a REST mapper of fakeKinds.
func fakeCluster(t *testing.T, typed []runtime.Object, dyn ...*unstructured.Unstructured) *cluster.Cluster {
	t.Helper()
	m := meta.NewDefaultRESTMapper(nil)
	lists := map[schema.GroupVersionResource]string{}
	for _, gvk := range fakeKinds {
		scope := meta.RESTScopeNamespace
		if clusterScoped[gvk.Kind] {
			scope = meta.RESTScopeRoot
		}
		m.Add(gvk, scope)
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		lists[plural] = gvk.Kind + "List"
	}
	var objs []runtime.Object
	for _, u := range dyn {
		objs = append(objs, u)
	}
	return &cluster.Cluster{
		Client:  fake.NewClientset(typed...),
		Dynamic: dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists, objs...),
		Mapper:  resettable{m},
		Context: "test", Host: "https://198.18.0.1:6443",
	}
}

// withConditions sets an object's status.conditions: type → status,
// with a message for a status other than True.
func withConditions(u *unstructured.Unstructured, conds map[string]string, message string) *unstructured.Unstructured {
	u = u.DeepCopy()
	var cs []any
	for typ, st := range conds {
		c := map[string]any{"type": typ, "status": st}
		if st != "True" {
			c["reason"], c["message"] = "Failed", message
		}
		cs = append(cs, c)
	}
	_ = unstructured.SetNestedSlice(u.Object, cs, "status", "conditions")
	return u
}
