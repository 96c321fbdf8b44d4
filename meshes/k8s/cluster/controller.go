package cluster

import (
	"context"
	"encoding/json"
	"fmt"

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
)

// ControllerChange is what a run changed in a shared controller object
// and whether it was put back (a run's results directory records it).
type ControllerChange struct {
	Object       string             `json:"object"` // ConfigMap namespace/name
	Set          map[string]string  `json:"set"`
	Previous     map[string]*string `json:"previous"` // nil: the key was absent
	Restored     bool               `json:"restored"`
	RestoreError string             `json:"restore_error,omitempty"`
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
	prev, err := json.Marshal(ch.Previous)
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
			"annotations": map[string]string{AnnPrevious: string(prev), AnnConfiguredBy: runID}},
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
	patch := map[string]any{
		"metadata": map[string]any{
			"labels":      map[string]any{LabelConfiguredFor: nil},
			"annotations": map[string]any{AnnPrevious: nil, AnnConfiguredBy: nil},
		},
		"data": prev,
	}
	b, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	if _, err := c.Client.CoreV1().ConfigMaps(cm.Namespace).Patch(ctx, cm.Name, types.MergePatchType, b,
		metav1.PatchOptions{FieldManager: FieldManager}); err != nil {
		return c.Errorf("restore ConfigMap %s: %v", ref, OneLine(err))
	}
	return nil
}
