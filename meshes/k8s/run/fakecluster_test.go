package run

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	k8stesting "k8s.io/client-go/testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	"loadgen/meshes/k8s"

	"loadgen/meshes/k8s/cluster"
)

// resettable is a fixed REST mapper as the Cluster's (which discovery
// resets).
type resettable struct{ meta.RESTMapper }

func (resettable) Reset() {}

// fakeKinds are the kinds the fake cluster serves: namespaced unless
// listed in clusterScoped.
var fakeKinds = []schema.GroupVersionKind{
	{Version: "v1", Kind: "Namespace"},
	{Version: "v1", Kind: "Pod"},
	{Version: "v1", Kind: "Service"},
	{Version: "v1", Kind: "Secret"},
	{Version: "v1", Kind: "ConfigMap"},
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Group: "batch", Version: "v1", Kind: "Job"},
	{Group: "security.istio.io", Version: "v1", Kind: "PeerAuthentication"},
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

var clusterScoped = map[string]bool{"Mesh": true, "GatewayClass": true, "IngressClass": true, "Namespace": true}

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
		m.AddSpecific(gvk, gvk.GroupVersion().WithResource(k8s.Plural(gvk.Kind)), gvk.GroupVersion().WithResource(strings.ToLower(gvk.Kind)), scope)
		lists[gvk.GroupVersion().WithResource(k8s.Plural(gvk.Kind))] = gvk.Kind + "List"
	}
	d := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists)
	for _, u := range dyn {
		// By the resource the API server serves (the fake would guess
		// "gatewaies" from the kind).
		gvr := u.GroupVersionKind().GroupVersion().WithResource(k8s.Plural(u.GetKind()))
		if err := d.Tracker().Create(gvr, u, u.GetNamespace()); err != nil {
			t.Fatalf("%s: %v", k8s.ObjectRef(u), err)
		}
	}
	return &cluster.Cluster{
		Client:  fake.NewClientset(typed...),
		Dynamic: d,
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

// apiActions are the calls the fake clients recorded: group, resource
// (with its subresource), verb, namespace and the object's name.
type apiAction struct{ group, resource, verb, namespace, name string }

func apiActions(c *cluster.Cluster, more ...actioner) []apiAction {
	var acts []k8stesting.Action
	for _, m := range more {
		acts = append(acts, m.Actions()...)
	}
	if f, ok := c.Client.(*fake.Clientset); ok {
		acts = append(acts, f.Actions()...)
	}
	if f, ok := c.Dynamic.(*dynamicfake.FakeDynamicClient); ok {
		acts = append(acts, f.Actions()...)
	}
	var out []apiAction
	for _, a := range acts {
		r := a.GetResource().Resource
		if sub := a.GetSubresource(); sub != "" {
			r += "/" + sub
		}
		name := ""
		switch a := a.(type) {
		case interface{ GetName() string }: // get, delete, patch
			name = a.GetName()
		case k8stesting.CreateAction:
			if m, err := meta.Accessor(a.GetObject()); err == nil {
				name = m.GetName()
			}
		}
		verb := a.GetVerb()
		if r == "pods/log" {
			verb = "get"
		}
		out = append(out, apiAction{a.GetResource().Group, r, verb, a.GetNamespace(), name})
	}
	return out
}

// actioner is a fake client of another API (metrics.k8s.io's), whose
// calls count beside the cluster's.
type actioner interface{ Actions() []k8stesting.Action }

// assertPermitted holds the calls a run made on the fake clients to the
// permissions table (k8s.Permissions): each one granted by a row for
// `k8s run` with these options.
func assertPermitted(t *testing.T, calls []apiAction, o k8s.Options) {
	t.Helper()
	for _, a := range calls {
		if a.resource == "version" {
			continue // discovery's /version: every user may read it (system:public-info-viewer)
		}
		if !k8s.Allows(k8s.ForRun, o, a.group, a.resource, a.verb, a.namespace, a.name) {
			t.Errorf("mesh %s: %s %s (group %q) in namespace %q, name %q: no row of the permissions table grants it",
				o.Mesh, a.verb, a.resource, a.group, a.namespace, a.name)
		}
	}
}
