package k8s

import (
	"maps"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

func TestParseToleration(t *testing.T) {
	ns, pns, nx := corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute
	eq, ex := corev1.TolerationOpEqual, corev1.TolerationOpExists
	for in, want := range map[string]corev1.Toleration{
		"dedicated=load:NoSchedule":                        {Key: "dedicated", Operator: eq, Value: "load", Effect: ns},
		"dedicated=load":                                   {Key: "dedicated", Operator: eq, Value: "load"},
		"dedicated=:noexecute":                             {Key: "dedicated", Operator: eq, Value: "", Effect: nx},
		"node-role.kubernetes.io/control-plane:NoSchedule": {Key: "node-role.kubernetes.io/control-plane", Operator: ex, Effect: ns},
		"gpu":                         {Key: "gpu", Operator: ex},
		"gpu:Exists":                  {Key: "gpu", Operator: ex},
		"gpu:exists:PreferNoSchedule": {Key: "gpu", Operator: ex, Effect: pns},
	} {
		got, err := ParseToleration(in)
		if err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", in, got, err, want)
		}
	}
	for in, why := range map[string]string{
		"":                         "want KEY",
		"=load:NoSchedule":         "want KEY",
		":Exists":                  "want KEY",
		"dedicated=load:Sometimes": `effect "Sometimes"`,
		"dedicated=load:Exists":    "Exists tolerates any value",
		"gpu:Equal:NoSchedule":     "KEY:Exists[:EFFECT]",
		"gpu:Exists:Never":         `effect "Never"`,
		"bad key:NoSchedule":       `key "bad key"`,
		"k=v v:NoSchedule":         `taint value "v v"`,
		"k:NoSchedule:":            "KEY:Exists",
	} {
		if _, err := ParseToleration(in); err == nil || !strings.Contains(err.Error(), why) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line with %q", in, err, why)
		}
	}
}

func TestParseNodeSelector(t *testing.T) {
	got, err := ParseNodeSelector("kubernetes.io/os=linux, node-role=load", nil)
	if want := map[string]string{"kubernetes.io/os": "linux", "node-role": "load"}; err != nil || !maps.Equal(got, want) {
		t.Errorf("%v, %v; want %v", got, err, want)
	}
	// Repeated: merged, the same value again is fine, another is not.
	got, err = ParseNodeSelector("zone=a,node-role=load", got)
	if err != nil || len(got) != 3 || got["zone"] != "a" {
		t.Errorf("merged: %v, %v", got, err)
	}
	if _, err := ParseNodeSelector("node-role=other", got); err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Errorf("a key with two values: %v", err)
	}
	for in, why := range map[string]string{
		"":              "want KEY=VALUE",
		"node-role":     "want KEY=VALUE",
		"a=b,,c=d":      "want KEY=VALUE",
		"=load":         `key ""`,
		"-bad-=x":       `key "-bad-"`,
		"k=not a value": `label value "not a value"`,
	} {
		if _, err := ParseNodeSelector(in, nil); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%q: %v, want %q", in, err, why)
		}
	}
}

func TestParseResources(t *testing.T) {
	got, err := ParseResources("cpu=2,memory=1Gi,ephemeral-storage=0,hugepages-2Mi=4Mi,nvidia.com/gpu=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[corev1.ResourceName]string{"cpu": "2", "memory": "1Gi", "ephemeral-storage": "0", "hugepages-2Mi": "4Mi", "nvidia.com/gpu": "1"} {
		if q := got[name]; q.Cmp(resource.MustParse(want)) != 0 {
			t.Errorf("%s = %s, want %s", name, q.String(), want)
		}
	}
	for in, why := range map[string]string{
		"":               "want NAME=QUANTITY",
		"cpu":            "want NAME=QUANTITY",
		"cpu=lots":       `cpu="lots"`,
		"memory=-1Gi":    `memory="-1Gi"`,
		"gpu=1":          `resource "gpu"`,
		"hugepages-=1Mi": `resource "hugepages-"`,
		"cpu=1,cpu=2":    "given twice",
	} {
		if _, err := ParseResources(in, nil); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%q: %v, want %q", in, err, why)
		}
	}
}

// FuzzParseToleration checks that no input panics; what is accepted is a
// toleration the API server takes (a valid key, Equal with a valid value or
// Exists with none, a known effect or every one).
func FuzzParseToleration(f *testing.F) {
	for _, s := range []string{"dedicated=load:NoSchedule", "gpu:Exists:NoExecute", "k", ":", "=:", "a=b:c:d", "k:Exists:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tol, err := ParseToleration(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") && !strings.Contains(s, "\n") {
				t.Errorf("%q: a multi-line error: %v", s, err)
			}
			return
		}
		if len(validation.IsQualifiedName(tol.Key)) > 0 {
			t.Errorf("%q: key %q accepted", s, tol.Key)
		}
		switch tol.Operator {
		case corev1.TolerationOpExists:
			if tol.Value != "" {
				t.Errorf("%q: Exists with value %q", s, tol.Value)
			}
		case corev1.TolerationOpEqual:
			if len(validation.IsValidLabelValue(tol.Value)) > 0 {
				t.Errorf("%q: value %q accepted", s, tol.Value)
			}
		default:
			t.Errorf("%q: operator %q", s, tol.Operator)
		}
		if tol.Effect != "" && !strings.Contains(" NoSchedule PreferNoSchedule NoExecute ", " "+string(tol.Effect)+" ") {
			t.Errorf("%q: effect %q", s, tol.Effect)
		}
	})
}

// FuzzParseNodeSelector checks that no input panics; every accepted key and
// value is a valid label's.
func FuzzParseNodeSelector(f *testing.F) {
	for _, s := range []string{"a=b", "kubernetes.io/os=linux,x=", "=", ",", "a=b=c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		sel, err := ParseNodeSelector(s, nil)
		if err != nil {
			return
		}
		if len(sel) == 0 {
			t.Errorf("%q: accepted, empty", s)
		}
		for k, v := range sel {
			if len(validation.IsQualifiedName(k)) > 0 || len(validation.IsValidLabelValue(v)) > 0 {
				t.Errorf("%q: %s=%s accepted", s, k, v)
			}
		}
	})
}

// FuzzParseResources checks that no input panics; every accepted quantity is
// non-negative.
func FuzzParseResources(f *testing.F) {
	for _, s := range []string{"cpu=2,memory=1Gi", "cpu=1e3", "memory=1.5Gi", "a/b=1", "cpu=-0", "cpu=9999999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseResources(s, nil)
		if err != nil {
			return
		}
		for name, q := range l {
			if q.Sign() < 0 {
				t.Errorf("%q: %s=%s accepted", s, name, q.String())
			}
		}
	})
}

// TestRunnerPlacement checks that the worker pods carry the node selector,
// the tolerations, the requests and the limits given, beside the
// anti-affinity that keeps them off the targets' nodes; the target pods
// (both of an ambient mesh) are pinned to --target-node through the
// scheduler.
func TestRunnerPlacement(t *testing.T) {
	sel, _ := ParseNodeSelector("node-role=load", nil)
	tol1, _ := ParseToleration("dedicated=load:NoSchedule")
	tol2, _ := ParseToleration("spot:Exists")
	req, _ := ParseResources("cpu=2,memory=1Gi", nil)
	lim, _ := ParseResources("cpu=4,memory=1Gi,nvidia.com/gpu=1", nil)
	o, err := Options{Mesh: MeshIstioAmbient, WorkerNodeSelector: sel, WorkerTolerations: []corev1.Toleration{tol1, tol2},
		WorkerRequests: req, WorkerLimits: lim, TargetNode: "node-b"}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	pod := o.Job(JobSpec{Name: "j", Workers: 2}).Spec.Template.Spec
	if !maps.Equal(pod.NodeSelector, map[string]string{"node-role": "load"}) {
		t.Errorf("nodeSelector %v", pod.NodeSelector)
	}
	if !reflect.DeepEqual(pod.Tolerations, []corev1.Toleration{
		{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "load", Effect: corev1.TaintEffectNoSchedule},
		{Key: "spot", Operator: corev1.TolerationOpExists}}) {
		t.Errorf("tolerations %+v", pod.Tolerations)
	}
	r := pod.Containers[0].Resources
	for _, c := range []struct {
		l          corev1.ResourceList
		name, want string
	}{{r.Requests, "cpu", "2"}, {r.Requests, "memory", "1Gi"}, {r.Limits, "cpu", "4"}, {r.Limits, "memory", "1Gi"}, {r.Limits, "nvidia.com/gpu", "1"}} {
		if q, ok := c.l[corev1.ResourceName(c.name)]; !ok || q.Cmp(resource.MustParse(c.want)) != 0 {
			t.Errorf("%s: %s, want %s (requests %v, limits %v)", c.name, q.String(), c.want, r.Requests, r.Limits)
		}
	}
	if len(r.Requests) != 2 || len(r.Limits) != 3 {
		t.Errorf("requests %v limits %v", r.Requests, r.Limits)
	}
	if pod.Affinity.NodeAffinity != nil || len(pod.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 {
		t.Errorf("workers' affinity %+v: want the anti-affinity to the targets only", pod.Affinity)
	}
	pinned := 0
	for _, d := range []*appsv1.Deployment{o.target(), o.targetDirect()} {
		ps := d.Spec.Template.Spec
		if ps.Affinity == nil || ps.Affinity.NodeAffinity == nil || ps.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
			t.Errorf("%s: no required node affinity", d.Name)
			continue
		}
		na := ps.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms
		if len(na) != 1 || len(na[0].MatchFields) != 1 || na[0].MatchFields[0].Key != "metadata.name" ||
			na[0].MatchFields[0].Operator != corev1.NodeSelectorOpIn || !reflect.DeepEqual(na[0].MatchFields[0].Values, []string{"node-b"}) {
			t.Errorf("%s: node affinity %+v", d.Name, na)
			continue
		}
		if d.Name == TargetDirectName && ps.Affinity.PodAffinity == nil {
			t.Errorf("%s lost its pod affinity to the mesh target", d.Name)
		}
		pinned++
	}
	if pinned != 2 {
		t.Errorf("%d target pods pinned, want 2", pinned)
	}
}

// TestWorkerResourceDefaults checks that a limit below a default request
// lowers the request to it; a request given twice, a request above its limit,
// an extended resource without its equal limit and a bad node name are
// refused, each naming the flag.
func TestWorkerResourceDefaults(t *testing.T) {
	lim, _ := ParseResources("cpu=50m", nil)
	o, err := Options{WorkerLimits: lim}.WithDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if r := o.workerResources(); r.Requests.Cpu().String() != "50m" || r.Requests.Memory().String() != DefaultWorkerMem {
		t.Errorf("requests %v, want cpu at the limit and memory's default", r.Requests)
	}
	cpu, _ := ParseResources("cpu=1", nil)
	gpu, _ := ParseResources("nvidia.com/gpu=1", nil)
	for why, bad := range map[string]Options{
		"--worker-cpu and --worker-resources":         {WorkerCPU: "1", WorkerRequests: cpu},
		"above their limit 50m":                       {WorkerRequests: cpu, WorkerLimits: lim},
		"above their limit":                           {WorkerCPU: "1", WorkerLimits: lim},
		"nvidia.com/gpu request needs the same limit": {WorkerRequests: gpu},
		"--target-node":                               {TargetNode: "Node_1"},
		"--worker-toleration":                         {WorkerTolerations: []corev1.Toleration{{Key: "a b"}}},
		"--worker-node-selector":                      {WorkerNodeSelector: map[string]string{"k": "a b"}},
	} {
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), why) {
			t.Errorf("%+v: %v, want %q", bad, err, why)
		}
	}
}

// FormatToleration writes what ParseToleration reads: each form comes
// back as its shortest spelling, and reads back as the same toleration.
func TestFormatToleration(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"dedicated=load:NoSchedule", "dedicated=load:NoSchedule"},
		{"dedicated=load", "dedicated=load"},
		{"dedicated:noexecute", "dedicated:NoExecute"},
		{"dedicated", "dedicated"},
		{"dedicated:Exists", "dedicated"},
		{"dedicated:exists:PreferNoSchedule", "dedicated:PreferNoSchedule"},
		{"example.com/pool=", "example.com/pool="},
	} {
		tol, err := ParseToleration(tc.in)
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		got := FormatToleration(tol)
		if got != tc.want {
			t.Errorf("FormatToleration(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if back, err := ParseToleration(got); err != nil || back != tol {
			t.Errorf("%q reads back as %+v, %v; want %+v", got, back, err, tol)
		}
	}
}
