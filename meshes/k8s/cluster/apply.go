package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"loadgen/meshes/k8s"
)

// FieldManager is loadgen's name in server-side apply.
const FieldManager = "loadgen"

// CheckKinds makes sure the API server serves every kind of objs, before
// anything is applied: a mesh whose CRDs are missing (Istio not installed)
// is named with the kinds it lacks.
func (c *Cluster) CheckKinds(mesh string, objs []*unstructured.Unstructured) error {
	c.Mapper.Reset()
	var missing []string
	seen := map[schema.GroupVersionKind]bool{}
	for _, u := range objs {
		gvk := u.GroupVersionKind()
		if seen[gvk] {
			continue
		}
		seen[gvk] = true
		if _, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
			if meta.IsNoMatchError(err) {
				missing = append(missing, fmt.Sprintf("%s (%s)", gvk.Kind, gvk.GroupVersion()))
				continue
			}
			return c.Errorf("discovery: %v", OneLine(err))
		}
	}
	if len(missing) > 0 {
		return c.Errorf("--mesh %s needs kinds this cluster does not serve: %s; install %s (its CRDs) first — nothing was applied",
			mesh, strings.Join(missing, ", "), provider(mesh))
	}
	return nil
}

func provider(mesh string) string {
	switch mesh {
	case k8s.MeshIstio, k8s.MeshIstioAmbient, k8s.MeshIstioWaypoint:
		return "Istio (and the Gateway API CRDs for waypoints)"
	case k8s.MeshAppMesh:
		return "the App Mesh controller"
	case k8s.MeshGateway:
		return "the Gateway API CRDs and your implementation"
	}
	return "the missing API"
}

// Resource finds the dynamic client of a kind, in namespace when the
// kind is namespaced.
func (c *Cluster) Resource(gvk schema.GroupVersionKind, namespace string) (dynamic.ResourceInterface, *meta.RESTMapping, error) {
	m, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, nil, err
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return c.Dynamic.Resource(m.Resource).Namespace(namespace), m, nil
	}
	return c.Dynamic.Resource(m.Resource), m, nil
}

// Apply creates or updates each object by server-side apply, with strict
// field validation: the API server refuses a field it does not know.
func (c *Cluster) Apply(ctx context.Context, objs []*unstructured.Unstructured) error {
	for _, u := range objs {
		ri, _, err := c.Resource(u.GroupVersionKind(), u.GetNamespace())
		if err != nil {
			return c.Errorf("%s: %v", k8s.ObjectRef(u), OneLine(err))
		}
		b, err := json.Marshal(u.Object)
		if err != nil {
			return err
		}
		if _, err := ri.Patch(ctx, u.GetName(), types.ApplyPatchType, b, metav1.PatchOptions{
			FieldManager: FieldManager, Force: ptrTrue(), FieldValidation: "Strict"}); err != nil {
			return c.Errorf("apply %s: %v", k8s.ObjectRef(u), OneLine(err))
		}
	}
	return nil
}

func ptrTrue() *bool { t := true; return &t }

// RunKinds are the kinds a run's cleanup looks at: those of the objects
// it applied, and the Jobs of its steps and their pods.
func RunKinds(objs []*unstructured.Unstructured) []schema.GroupVersionKind {
	out := []schema.GroupVersionKind{{Group: "batch", Version: "v1", Kind: "Job"}, {Version: "v1", Kind: "Pod"}}
	for _, u := range objs {
		if gvk := u.GroupVersionKind(); !slices.Contains(out, gvk) {
			out = append(out, gvk)
		}
	}
	return out
}

// cleanupKinds are the kinds loadgen creates in a namespace, deleted by
// label, in this order (controllers before their pods: a ReplicaSet
// whose pod is deleted first makes a new one); kinds the cluster does not
// serve are skipped.
var cleanupKinds = []schema.GroupVersionKind{
	{Group: "batch", Version: "v1", Kind: "Job"},
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Version: "v1", Kind: "Pod"},
	{Version: "v1", Kind: "Service"},
	{Version: "v1", Kind: "Secret"},
	{Version: "v1", Kind: "ConfigMap"},
	{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"},
	{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"},
	{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "GRPCRoute"},
	{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "TCPRoute"},
	{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "Gateway"},
	{Group: "security.istio.io", Version: "v1", Kind: "PeerAuthentication"},
	{Group: "appmesh.k8s.aws", Version: "v1beta2", Kind: "VirtualService"},
	{Group: "appmesh.k8s.aws", Version: "v1beta2", Kind: "VirtualRouter"},
	{Group: "appmesh.k8s.aws", Version: "v1beta2", Kind: "VirtualNode"},
	{Group: "appmesh.k8s.aws", Version: "v1beta2", Kind: "Mesh"}, // cluster-scoped: by LabelNamespace
}

// Cleanup deletes what loadgen created in namespace: the objects labelled
// managed-by=loadgen (of run runID, or of any run when empty), the
// cluster-scoped ones tied to the namespace, and the namespace itself only
// when loadgen created it. It returns what it deleted. With only, it
// looks at those kinds only (a run knows what it applied: it then asks
// for no right on others); a kind it may not list is skipped.
func (c *Cluster) Cleanup(ctx context.Context, namespace, runID string, only ...schema.GroupVersionKind) ([]string, error) {
	c.Mapper.Reset()
	var deleted []string
	sel := k8s.Selector(runID)
	bg, fg := metav1.DeletePropagationBackground, metav1.DeletePropagationForeground
	for _, gvk := range cleanupKinds {
		if len(only) > 0 && !slices.Contains(only, gvk) {
			continue
		}
		// A Deployment goes in the foreground: its ReplicaSet is marked
		// for deletion at once, and makes no new pod meanwhile.
		policy := &bg
		if gvk.Kind == "Deployment" {
			policy = &fg
		}
		ri, m, err := c.Resource(gvk, namespace)
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return deleted, c.Errorf("%s: %v", gvk.Kind, OneLine(err))
		}
		s := sel
		if m.Scope.Name() != meta.RESTScopeNameNamespace {
			s += "," + k8s.LabelNamespace + "=" + namespace
		}
		list, err := ri.List(ctx, metav1.ListOptions{LabelSelector: s})
		if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
			// Forbidden: a kind the run's rights (loadgen k8s rbac) do not
			// cover, which it did not apply either.
			continue
		}
		if err != nil {
			return deleted, c.Errorf("list %s: %v", m.Resource.Resource, OneLine(err))
		}
		for _, it := range list.Items {
			err := ri.Delete(ctx, it.GetName(), metav1.DeleteOptions{PropagationPolicy: policy})
			if err != nil && !apierrors.IsNotFound(err) {
				return deleted, c.Errorf("delete %s: %v", k8s.ObjectRef(&it), OneLine(err))
			}
			deleted = append(deleted, k8s.ObjectRef(&it))
		}
	}
	ns, err := c.Client.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return deleted, c.Errorf("namespace %s: %v", namespace, OneLine(err))
	case OwnNamespace(ns.Labels, runID):
		if err := c.Client.CoreV1().Namespaces().Delete(ctx, namespace, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return deleted, c.Errorf("delete namespace %s: %v", namespace, OneLine(err))
		}
		deleted = append(deleted, "Namespace "+namespace)
	}
	sort.Strings(deleted)
	return deleted, nil
}

// OwnNamespace tells whether loadgen created the namespace whose labels
// are l (of run runID, when given).
func OwnNamespace(l map[string]string, runID string) bool {
	return l[k8s.LabelManagedBy] == k8s.ManagedBy && l[k8s.LabelCreated] == "true" && (runID == "" || l[k8s.LabelRun] == runID)
}

// CheckNamespace refuses a namespace loadgen did not create (it would
// have to label it) and one a killed run left behind.
func (c *Cluster) CheckNamespace(ctx context.Context, namespace string) error {
	ns, err := c.Client.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return c.Errorf("namespace %s: %v", namespace, OneLine(err))
	}
	if OwnNamespace(ns.Labels, "") {
		return fmt.Errorf("namespace %s holds objects of loadgen run %s: run `loadgen k8s cleanup -n %s` first",
			ns.Name, ns.Labels[k8s.LabelRun], ns.Name)
	}
	return fmt.Errorf("namespace %s exists and loadgen did not create it: choose another -n (loadgen creates its own, to delete it afterwards)", ns.Name)
}
