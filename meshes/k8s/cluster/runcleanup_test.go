package cluster

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"loadgen/meshes/k8s"
)

// fixedMapper is a REST mapper of fixed kinds, as the Cluster's (which
// discovery resets).
type fixedMapper struct{ meta.RESTMapper }

func (fixedMapper) Reset() {}

// killedRun is a cluster after a run of namespace bench (run r1) that
// changed the ingress controller's ConfigMap and did not put it back:
// its namespace, a pod and a Service of its own, and the ConfigMap with
// loadgen's marks. The first failPatches patches of a ConfigMap fail.
func killedRun(t *testing.T, failPatches int) *Cluster {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench",
		Labels: map[string]string{k8s.LabelManagedBy: k8s.ManagedBy, k8s.LabelCreated: "true", k8s.LabelRun: "r1"}}}
	prev, _ := json.Marshal(map[string]*string{"worker-processes": ptr("2"), "keep-alive-requests": nil})
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: k8s.IngressControllerConfigMap, Namespace: k8s.DefaultIngressNS,
			Labels:      map[string]string{LabelConfiguredFor: "bench"},
			Annotations: map[string]string{AnnPrevious: string(prev), AnnConfiguredBy: "r1", AnnPreviousOwners: "{}"}},
		Data: map[string]string{"worker-processes": "4", "keep-alive-requests": "10000", "allow-snippet-annotations": "false"},
	}
	typed := fake.NewClientset(ns, cm)
	typed.PrependReactor("patch", "configmaps", func(k8stesting.Action) (bool, runtime.Object, error) {
		if failPatches > 0 {
			failPatches--
			return true, nil, apierrors.NewServiceUnavailable("etcd is slow")
		}
		return false, nil, nil
	})

	m := meta.NewDefaultRESTMapper(nil)
	lists := map[schema.GroupVersionResource]string{}
	for _, kind := range []string{"Pod", "Service", "ConfigMap"} {
		gvk := schema.GroupVersionKind{Version: "v1", Kind: kind}
		gvr := gvk.GroupVersion().WithResource(k8s.Plural(kind))
		m.AddSpecific(gvk, gvr, gvk.GroupVersion().WithResource(strings.ToLower(kind)), meta.RESTScopeNamespace)
		lists[gvr] = kind + "List"
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), lists)
	for _, kind := range []string{"Pod", "Service"} {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion("v1")
		u.SetKind(kind)
		u.SetNamespace("bench")
		u.SetName("loadgen-target")
		u.SetLabels(map[string]string{k8s.LabelManagedBy: k8s.ManagedBy, k8s.LabelRun: "r1"})
		if err := dyn.Tracker().Create(schema.GroupVersionResource{Version: "v1", Resource: k8s.Plural(kind)}, u, "bench"); err != nil {
			t.Fatal(err)
		}
	}
	return &Cluster{Client: typed, Dynamic: dyn, Mapper: fixedMapper{m}, Context: "test", Host: "https://198.18.0.1:6443"}
}

func ptr(s string) *string { return &s }

// The end of a run and `k8s cleanup` share one cleanup: the controller's
// ConfigMap put back first, then the run's objects deleted, even when
// the restore failed (a run's deletion never takes the ConfigMap, which
// keeps its previous values for a later restore), and both errors said.
func TestCleanupRun(t *testing.T) {
	ctx := context.Background()
	all := []string{"Namespace bench", "Pod bench/loadgen-target", "Service bench/loadgen-target"}
	const cmRef = "ConfigMap " + k8s.DefaultIngressNS + "/" + k8s.IngressControllerConfigMap
	for _, tc := range []struct {
		name        string
		r           RunCleanup
		failPatches int
		restored    []string
		restoreErr  string
		putBack     bool
	}{
		{"k8s cleanup: restored, then deleted", RunCleanup{Namespace: "bench", Restore: true}, 0, []string{cmRef}, "", true},
		{"k8s run: restored where it changed it", RunCleanup{Namespace: "bench", RunID: "r1", Restore: true,
			IngressNamespaces: []string{k8s.DefaultIngressNS}}, 0, []string{cmRef}, "", true},
		{"a failed restore: deleted all the same", RunCleanup{Namespace: "bench", RunID: "r1", Restore: true,
			IngressNamespaces: []string{k8s.DefaultIngressNS}}, 1, nil, "restore " + cmRef + ": etcd is slow", false},
		{"a run that changed nothing restores nothing", RunCleanup{Namespace: "bench", RunID: "r1"}, 0, nil, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := killedRun(t, tc.failPatches)
			got := c.CleanupRun(ctx, tc.r)
			if !slices.Equal(got.Restored, tc.restored) {
				t.Errorf("restored %q, want %q", got.Restored, tc.restored)
			}
			if (got.RestoreErr == nil) != (tc.restoreErr == "") || (got.RestoreErr != nil && !strings.Contains(got.RestoreErr.Error(), tc.restoreErr)) {
				t.Errorf("restore error %v, want %q", got.RestoreErr, tc.restoreErr)
			}
			if got.DeleteErr != nil || !slices.Equal(got.Deleted, all) {
				t.Errorf("deleted %q (%v), want %q", got.Deleted, got.DeleteErr, all)
			}
			if (got.Err() == nil) != (tc.restoreErr == "") {
				t.Errorf("Err() = %v", got.Err())
			}
			if !tc.r.Restore {
				for _, a := range c.Client.(*fake.Clientset).Actions() {
					if a.GetResource().Resource == "configmaps" {
						t.Errorf("%s configmaps: a run that changed no controller asks for none", a.GetVerb())
					}
				}
			}
			cm, err := c.Client.CoreV1().ConfigMaps(k8s.DefaultIngressNS).Get(ctx, k8s.IngressControllerConfigMap, metav1.GetOptions{})
			if err != nil {
				t.Fatalf("the controller's ConfigMap: %v", err)
			}
			if back := cm.Data["worker-processes"] == "2" && cm.Labels[LabelConfiguredFor] == ""; back != tc.putBack {
				t.Errorf("put back %v, want %v: %v %v", back, tc.putBack, cm.Data, cm.Labels)
			}
			if tc.putBack {
				return
			}
			// What the restore needs outlived the deletion: `k8s cleanup`
			// puts it back later.
			if cm.Annotations[AnnPrevious] == "" || cm.Labels[LabelConfiguredFor] != "bench" {
				t.Fatalf("the previous values are gone: %v %v", cm.Labels, cm.Annotations)
			}
			later := c.CleanupRun(ctx, RunCleanup{Namespace: "bench", Restore: true})
			if later.Err() != nil || !slices.Equal(later.Restored, []string{cmRef}) {
				t.Errorf("k8s cleanup afterwards: restored %q, %v", later.Restored, later.Err())
			}
			cm, _ = c.Client.CoreV1().ConfigMaps(k8s.DefaultIngressNS).Get(ctx, k8s.IngressControllerConfigMap, metav1.GetOptions{})
			if _, ok := cm.Data["keep-alive-requests"]; cm.Data["worker-processes"] != "2" || ok || cm.Data["allow-snippet-annotations"] != "false" {
				t.Errorf("after k8s cleanup: %v", cm.Data)
			}
		})
	}
}
