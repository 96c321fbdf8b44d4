//lint:file-ignore SA1019 FieldsV1's accessors are newer than the e2e module's apimachinery v0.35

package cluster

import (
	"encoding/json"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func fields(t *testing.T, m metav1.ManagedFieldsEntry) map[string]map[string]any {
	t.Helper()
	var f map[string]map[string]any
	if err := json.Unmarshal(m.FieldsV1.Raw, &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestHandBack checks that after --configure-controller's restore, loadgen
// owns nothing of the controller's ConfigMap and each key it changed is its
// previous owners' again (Helm's). Kubernetes, Server-Side Apply:
// "Writes to objects with managed fields can be forced, in which case
// the value of any conflicted field will be overridden, and the
// ownership will be transferred" — loadgen's forced apply took the keys
// from Helm, and kept them after the restore.
func TestHandBack(t *testing.T) {
	entry := func(manager string, op metav1.ManagedFieldsOperationType, raw string) metav1.ManagedFieldsEntry {
		return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(raw)}}
	}
	// As the controller's ConfigMap is after the forced apply and the
	// restore's merge patch: Helm kept allow-snippet-annotations, loadgen
	// took worker-processes and added keep-alive-requests.
	after := []metav1.ManagedFieldsEntry{
		entry("helm", metav1.ManagedFieldsOperationUpdate, `{"f:data":{".":{},"f:allow-snippet-annotations":{}},"f:metadata":{"f:labels":{".":{},"f:app.kubernetes.io/name":{}}}}`),
		entry(FieldManager, metav1.ManagedFieldsOperationApply, `{"f:data":{"f:worker-processes":{},"f:keep-alive-requests":{}}}`),
		entry(FieldManager, metav1.ManagedFieldsOperationUpdate, `{"f:data":{"f:worker-processes":{}}}`),
	}
	before := []metav1.ManagedFieldsEntry{
		entry("helm", metav1.ManagedFieldsOperationUpdate, `{"f:data":{".":{},"f:allow-snippet-annotations":{},"f:worker-processes":{}}}`),
		entry("kubectl-edit", metav1.ManagedFieldsOperationUpdate, `{"f:data":{"f:worker-processes":{}}}`),
	}
	owners := dataKeyOwners(before, []string{"worker-processes", "keep-alive-requests"})
	if len(owners["worker-processes"]) != 2 || len(owners["keep-alive-requests"]) != 0 {
		t.Fatalf("owners before %+v", owners)
	}
	three := "3"
	got := handBack(after, owners, map[string]*string{"worker-processes": &three, "keep-alive-requests": nil})
	var managers []string
	for _, m := range got {
		managers = append(managers, m.Manager)
		if m.Manager == FieldManager {
			t.Errorf("loadgen still owns %s", m.FieldsV1.Raw)
		}
	}
	for _, want := range []string{"helm", "kubectl-edit"} {
		i := slices.Index(managers, want)
		if i < 0 {
			t.Errorf("no entry of %s: %v", want, managers)
			continue
		}
		f := fields(t, got[i])
		if _, ok := f["f:data"]["f:worker-processes"]; !ok {
			t.Errorf("%s does not own worker-processes again: %s", want, got[i].FieldsV1.Raw)
		}
		if _, ok := f["f:data"]["f:keep-alive-requests"]; ok {
			t.Errorf("%s owns keep-alive-requests, which was absent before: %s", want, got[i].FieldsV1.Raw)
		}
	}
	if f := fields(t, got[slices.Index(managers, "helm")]); f["f:metadata"] == nil || f["f:data"]["f:allow-snippet-annotations"] == nil {
		t.Errorf("helm's other fields lost: %v", f)
	}
}
