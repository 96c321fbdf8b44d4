//lint:file-ignore SA1019 FieldsV1's accessors (GetRawBytes) are newer than the e2e module's apimachinery v0.35, which builds this file too

package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"loadgen/meshes/k8s"
)

// A shared controller object (the ingress-nginx controller's ConfigMap)
// that a run changes with --configure-controller carries who changed it
// and what it held before, so that the run, or `k8s cleanup` after a
// killed run, puts it back.
const (
	// LabelConfiguredFor is the namespace of the run that changed it.
	LabelConfiguredFor = "loadgen.dev/configured-for"
	// AnnPrevious holds, as JSON, each changed key's previous value (null:
	// the key was absent).
	AnnPrevious = "loadgen.dev/previous"
	// AnnConfiguredBy is the run id that changed it.
	AnnConfiguredBy = "loadgen.dev/configured-by-run"
	// AnnPreviousOwners holds, as JSON, the field managers that owned
	// each changed key before (Helm's, typically): the restore gives the
	// keys back to them.
	AnnPreviousOwners = "loadgen.dev/previous-owners"
)

// Owner is a field manager of a ConfigMap's key (a managedFields entry's
// identity).
type Owner struct {
	Manager     string                            `json:"manager"`
	Operation   metav1.ManagedFieldsOperationType `json:"operation"`
	APIVersion  string                            `json:"apiVersion,omitempty"`
	Subresource string                            `json:"subresource,omitempty"`
}

// dataKeyOwners are the managers of each key of a ConfigMap's data, from
// its managedFields (f:data.f:<key>).
func dataKeyOwners(mfs []metav1.ManagedFieldsEntry, keys []string) map[string][]Owner {
	out := map[string][]Owner{}
	for _, m := range mfs {
		if m.FieldsV1 == nil || m.Manager == FieldManager {
			continue
		}
		var f map[string]map[string]any
		if json.Unmarshal(m.FieldsV1.Raw, &f) != nil {
			continue
		}
		for _, k := range keys {
			if _, ok := f["f:data"]["f:"+k]; ok {
				out[k] = append(out[k], Owner{m.Manager, m.Operation, m.APIVersion, m.Subresource})
			}
		}
	}
	return out
}

// ControllerChange is what a run changed in a shared controller object
// and whether it was put back (a run's results directory records it).
type ControllerChange struct {
	Object   string             `json:"object"` // ConfigMap namespace/name
	Set      map[string]string  `json:"set"`
	Previous map[string]*string `json:"previous"` // nil: the key was absent
	// PreviousOwners are the field managers of each key before; the
	// restore gives the keys back to them and keeps none for loadgen.
	PreviousOwners map[string][]Owner `json:"previous_owners,omitempty"`
	Restored       bool               `json:"restored"`
	RestoreError   string             `json:"restore_error,omitempty"`
}

// ConfigureController sets want's keys in the controller's ConfigMap
// (want names it) by server-side apply, loadgen's field manager owning
// just those keys, after recording their previous values with record
// and on the object, which is marked as changed by run runID of
// namespace: the run, or `k8s cleanup` after a killed run, puts it back
// with RestoreControllers.
func (c *Cluster) ConfigureController(ctx context.Context, want *corev1.ConfigMap, namespace, runID string,
	record func(*ControllerChange) error) (*ControllerChange, error) {
	ref := want.Namespace + "/" + want.Name
	cms := c.Client.CoreV1().ConfigMaps(want.Namespace)
	cur, err := cms.Get(ctx, want.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("--configure-controller: ConfigMap %s does not exist: is ingress-nginx installed in namespace %s (--ingress-namespace)? "+
			"loadgen changes the controller's ConfigMap, it does not create one", ref, want.Namespace)
	}
	if err != nil {
		return nil, c.Errorf("ConfigMap %s: %v", ref, OneLine(err))
	}
	if ns := cur.Labels[LabelConfiguredFor]; ns != "" {
		return nil, fmt.Errorf("--configure-controller: ConfigMap %s is held by loadgen run %s of namespace %s, which has not put it back: "+
			"wait for that run, or run `loadgen k8s cleanup -n %s`", ref, cur.Annotations[AnnConfiguredBy], ns, ns)
	}
	ch := &ControllerChange{Object: "ConfigMap " + ref, Set: want.Data, Previous: map[string]*string{}}
	for key := range want.Data {
		if v, ok := cur.Data[key]; ok {
			ch.Previous[key] = &v
		} else {
			ch.Previous[key] = nil
		}
	}
	var keys []string
	for k := range want.Data {
		keys = append(keys, k)
	}
	ch.PreviousOwners = dataKeyOwners(cur.ManagedFields, keys)
	prev, err := json.Marshal(ch.Previous)
	if err != nil {
		return nil, err
	}
	owners, err := json.Marshal(ch.PreviousOwners)
	if err != nil {
		return nil, err
	}
	// Recorded first: a run killed between the two still says what it changed.
	if err := record(ch); err != nil {
		return nil, err
	}
	apply := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": want.Name, "namespace": want.Namespace,
			"labels":      map[string]string{LabelConfiguredFor: namespace},
			"annotations": map[string]string{AnnPrevious: string(prev), AnnConfiguredBy: runID, AnnPreviousOwners: string(owners)}},
		"data": want.Data,
	}
	b, err := json.Marshal(apply)
	if err != nil {
		return nil, err
	}
	if _, err := cms.Patch(ctx, want.Name, types.ApplyPatchType, b, metav1.PatchOptions{
		FieldManager: FieldManager, Force: ptrTrue(), FieldValidation: "Strict"}); err != nil {
		return nil, c.Errorf("apply ConfigMap %s: %v", ref, OneLine(err))
	}
	return ch, nil
}

// RestoreControllers puts back every controller ConfigMap a run in
// namespace changed (of run runID only, when given): each changed key to
// its previous value, or removed where it was absent, and loadgen's marks
// removed. It returns what it restored. It looks in ingressNamespaces
// when given (a run knows the one it changed), else in every namespace,
// or, without the right to list them all, in the default ingress
// namespace.
func (c *Cluster) RestoreControllers(ctx context.Context, namespace, runID string, ingressNamespaces ...string) ([]string, error) {
	sel := metav1.ListOptions{LabelSelector: LabelConfiguredFor + "=" + namespace}
	var items []corev1.ConfigMap
	look := ingressNamespaces
	if len(look) == 0 {
		l, err := c.Client.CoreV1().ConfigMaps("").List(ctx, sel)
		switch {
		case err == nil:
			items = l.Items
		case apierrors.IsForbidden(err):
			look = []string{k8s.DefaultIngressNS}
		default:
			return nil, c.Errorf("ConfigMaps: %v", OneLine(err))
		}
	}
	for _, ns := range look {
		l, err := c.Client.CoreV1().ConfigMaps(ns).List(ctx, sel)
		if apierrors.IsForbidden(err) {
			continue // no right to change them (loadgen k8s rbac without --configure-controller): none changed
		}
		if err != nil {
			return nil, c.Errorf("ConfigMaps in %s: %v", ns, OneLine(err))
		}
		items = append(items, l.Items...)
	}
	var restored []string
	for i := range items {
		cm := &items[i]
		if runID != "" && cm.Annotations[AnnConfiguredBy] != runID {
			continue
		}
		if err := c.restoreController(ctx, cm); err != nil {
			return restored, err
		}
		restored = append(restored, "ConfigMap "+cm.Namespace+"/"+cm.Name)
	}
	return restored, nil
}

// restoreController is one ConfigMap's restore: a merge patch of the
// previous values (null removes a key) and of loadgen's marks.
func (c *Cluster) restoreController(ctx context.Context, cm *corev1.ConfigMap) error {
	ref := cm.Namespace + "/" + cm.Name
	var prev map[string]*string
	if err := json.Unmarshal([]byte(cm.Annotations[AnnPrevious]), &prev); err != nil {
		return fmt.Errorf("ConfigMap %s: its %s annotation is not what loadgen wrote (%v): put its keys back by hand, then remove the %s label",
			ref, AnnPrevious, err, LabelConfiguredFor)
	}
	var owners map[string][]Owner
	_ = json.Unmarshal([]byte(cm.Annotations[AnnPreviousOwners]), &owners) // absent (an older run's): no owner to give back
	patch := map[string]any{
		"metadata": map[string]any{
			"labels":      map[string]any{LabelConfiguredFor: nil},
			"annotations": map[string]any{AnnPrevious: nil, AnnConfiguredBy: nil, AnnPreviousOwners: nil},
		},
		"data": prev,
	}
	b, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	cms := c.Client.CoreV1().ConfigMaps(cm.Namespace)
	restored, err := cms.Patch(ctx, cm.Name, types.MergePatchType, b, metav1.PatchOptions{FieldManager: FieldManager})
	if err != nil {
		return c.Errorf("restore ConfigMap %s: %v", ref, OneLine(err))
	}
	// The keys back to their owners, and loadgen owning nothing: a
	// later `helm upgrade` (or anyone's apply) meets no conflict of ours.
	restored.ManagedFields = handBack(restored.ManagedFields, owners, prev)
	if len(restored.ManagedFields) == 0 {
		restored.ManagedFields = []metav1.ManagedFieldsEntry{{}} // clears them (an empty list leaves them as they are)
	}
	if _, err := cms.Update(ctx, restored, metav1.UpdateOptions{FieldManager: FieldManager}); err != nil {
		return c.Errorf("give ConfigMap %s's keys back to their owners: %v", ref, OneLine(err))
	}
	return nil
}

// handBack drops loadgen's managedFields entries and gives each restored
// key (one with a previous value) back to the managers that owned it.
func handBack(mfs []metav1.ManagedFieldsEntry, owners map[string][]Owner, prev map[string]*string) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	for _, m := range mfs {
		if m.Manager != FieldManager {
			out = append(out, *m.DeepCopy())
		}
	}
	for key, os := range owners {
		if prev[key] == nil {
			continue // the key was absent before: removed, nobody's
		}
		for _, o := range os {
			i := slices.IndexFunc(out, func(m metav1.ManagedFieldsEntry) bool {
				return m.Manager == o.Manager && m.Operation == o.Operation && m.Subresource == o.Subresource
			})
			if i < 0 {
				out = append(out, metav1.ManagedFieldsEntry{Manager: o.Manager, Operation: o.Operation, APIVersion: o.APIVersion,
					Subresource: o.Subresource, Time: ptrNow(), FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte("{}")}})
				i = len(out) - 1
			}
			fields := map[string]any{}
			if out[i].FieldsV1 != nil {
				_ = json.Unmarshal(out[i].FieldsV1.Raw, &fields)
			}
			data, _ := fields["f:data"].(map[string]any)
			if data == nil {
				data = map[string]any{".": map[string]any{}}
			}
			data["f:"+key] = map[string]any{}
			fields["f:data"] = data
			raw, _ := json.Marshal(fields)
			out[i].FieldsV1 = &metav1.FieldsV1{Raw: raw}
		}
	}
	return out
}

func ptrNow() *metav1.Time { t := metav1.Now(); return &t }
