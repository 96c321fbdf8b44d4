package k8s

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ParseNodeSelector reads KEY=VALUE[,KEY=VALUE…] (a nodeSelector, as
// kubectl's -l writes equality) into sel, which it creates when nil. A key
// given twice with two values is refused.
func ParseNodeSelector(s string, sel map[string]string) (map[string]string, error) {
	if sel == nil {
		sel = map[string]string{}
	}
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%q: want KEY=VALUE[,KEY=VALUE…], e.g. kubernetes.io/os=linux,node-role=load", s)
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return nil, fmt.Errorf("%q: want KEY=VALUE, e.g. node-role=load", kv)
		}
		if err := labelKey(k); err != nil {
			return nil, err
		}
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return nil, fmt.Errorf("label value %q: %s", v, brief(errs[0]))
		}
		if old, seen := sel[k]; seen && old != v {
			return nil, fmt.Errorf("node label %s given twice (%q and %q): a node has one value", k, old, v)
		}
		sel[k] = v
	}
	return sel, nil
}

// labelKey checks a label or taint key: [PREFIX/]NAME.
func labelKey(k string) error {
	if errs := validation.IsQualifiedName(k); len(errs) > 0 {
		return fmt.Errorf("key %q: %s", k, brief(errs[0]))
	}
	return nil
}

// brief is a validation message less its examples and regular
// expression.
func brief(msg string) string {
	if i := strings.Index(msg, " (e.g."); i > 0 {
		return msg[:i]
	}
	return msg
}

// taintEffects are the effects a toleration names, as Kubernetes spells
// them.
var taintEffects = []corev1.TaintEffect{corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute}

// ParseToleration reads one toleration, in the words of the taint it
// tolerates (kubectl taint's KEY[=VALUE]:EFFECT):
//
//	KEY=VALUE:EFFECT   operator Equal, that effect
//	KEY=VALUE          operator Equal, every effect
//	KEY:EFFECT         operator Exists (any value of KEY), that effect
//	KEY                operator Exists, every effect
//	KEY:Exists[:EFFECT] the same as KEY[:EFFECT], the operator spelled out
//
// EFFECT is NoSchedule, PreferNoSchedule or NoExecute (any case).
func ParseToleration(s string) (corev1.Toleration, error) {
	var t corev1.Toleration
	kv, rest, hasRest := strings.Cut(s, ":")
	k, v, hasValue := strings.Cut(kv, "=")
	if k == "" {
		return t, fmt.Errorf("%q: want KEY[=VALUE][:EFFECT], e.g. dedicated=load:NoSchedule", s)
	}
	if err := labelKey(k); err != nil {
		return t, err
	}
	t.Key, t.Operator = k, corev1.TolerationOpExists
	if hasValue {
		if errs := validation.IsValidLabelValue(v); len(errs) > 0 {
			return t, fmt.Errorf("taint value %q: %s", v, brief(errs[0]))
		}
		t.Operator, t.Value = corev1.TolerationOpEqual, v
	}
	if !hasRest {
		return t, nil
	}
	effect := rest
	if op, e, ok := strings.Cut(rest, ":"); ok || strings.EqualFold(rest, string(corev1.TolerationOpExists)) {
		if !strings.EqualFold(op, string(corev1.TolerationOpExists)) {
			return t, fmt.Errorf("%q: want KEY[=VALUE][:EFFECT] or KEY:Exists[:EFFECT]", s)
		}
		if hasValue {
			return t, fmt.Errorf("%q: Exists tolerates any value of %s; give KEY=VALUE:EFFECT for one value", s, k)
		}
		if !ok {
			return t, nil
		}
		effect = e
	}
	i := slices.IndexFunc(taintEffects, func(te corev1.TaintEffect) bool { return strings.EqualFold(string(te), effect) })
	if i < 0 {
		return t, fmt.Errorf("%q: effect %q: want NoSchedule, PreferNoSchedule or NoExecute", s, effect)
	}
	t.Effect = taintEffects[i]
	return t, nil
}

// FormatToleration is t in ParseToleration's words, which read it back:
// KEY=VALUE for operator Equal, KEY alone for Exists, :EFFECT after it
// when it names one.
func FormatToleration(t corev1.Toleration) string {
	s := t.Key
	if t.Operator == corev1.TolerationOpEqual {
		s += "=" + t.Value
	}
	if t.Effect != "" {
		s += ":" + string(t.Effect)
	}
	return s
}

// ParseResources reads NAME=QUANTITY[,NAME=QUANTITY…] (kubectl set
// resources' --requests and --limits) into l, which it creates when nil:
// cpu, memory, ephemeral-storage, hugepages-SIZE or an extended resource
// (DOMAIN/NAME), each quantity non-negative. A name given twice is
// refused.
func ParseResources(s string, l corev1.ResourceList) (corev1.ResourceList, error) {
	if l == nil {
		l = corev1.ResourceList{}
	}
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("%q: want NAME=QUANTITY[,NAME=QUANTITY…], e.g. cpu=2,memory=1Gi", s)
	}
	for _, kv := range strings.Split(s, ",") {
		n, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return nil, fmt.Errorf("%q: want NAME=QUANTITY, e.g. cpu=500m", kv)
		}
		name := corev1.ResourceName(n)
		switch {
		case name == corev1.ResourceCPU, name == corev1.ResourceMemory, name == corev1.ResourceEphemeralStorage:
		case strings.HasPrefix(n, corev1.ResourceHugePagesPrefix) && len(n) > len(corev1.ResourceHugePagesPrefix):
		case strings.Contains(n, "/") && len(validation.IsQualifiedName(n)) == 0:
		default:
			return nil, fmt.Errorf("resource %q: want cpu, memory, ephemeral-storage, hugepages-SIZE or DOMAIN/NAME", n)
		}
		q, err := resource.ParseQuantity(v)
		if err != nil || q.Sign() < 0 {
			return nil, fmt.Errorf("%s=%q: want a non-negative Kubernetes quantity (e.g. 500m, 2, 1Gi)", n, v)
		}
		if _, seen := l[name]; seen {
			return nil, fmt.Errorf("resource %s given twice", n)
		}
		l[name] = q
	}
	return l, nil
}

// workerResources are the worker container's requests and limits: the
// requests are WorkerRequests with WorkerCPU and WorkerMemory (each 100m
// and 64Mi by default, below a smaller limit: the limit), so that a worker
// is never BestEffort (the QoS class a node under pressure starves first);
// the limits are WorkerLimits.
func (o Options) workerResources() corev1.ResourceRequirements {
	req := maps.Clone(o.WorkerRequests)
	if req == nil {
		req = corev1.ResourceList{}
	}
	for _, d := range []struct {
		name  corev1.ResourceName
		given string
		def   string
	}{{corev1.ResourceCPU, o.WorkerCPU, DefaultWorkerCPU}, {corev1.ResourceMemory, o.WorkerMemory, DefaultWorkerMem}} {
		if _, ok := req[d.name]; ok {
			continue
		}
		v := d.given
		if v == "" {
			v = d.def
		}
		q, err := resource.ParseQuantity(v)
		if err != nil {
			continue
		}
		if lim, ok := o.WorkerLimits[d.name]; ok && d.given == "" && lim.Cmp(q) < 0 {
			q = lim
		}
		req[d.name] = q
	}
	r := corev1.ResourceRequirements{Requests: req}
	if len(o.WorkerLimits) > 0 {
		r.Limits = maps.Clone(o.WorkerLimits)
	}
	return r
}

// validatePlacement checks the runner placement options: the requests
// against the limits (the API server refuses a request above its limit),
// the node selector's and the tolerations' keys, the target's node.
func (o Options) validatePlacement() error {
	if o.WorkerCPU != "" && hasResource(o.WorkerRequests, corev1.ResourceCPU) {
		return fmt.Errorf("--worker-cpu and --worker-resources cpu=… both set the workers' CPU request: give one")
	}
	if o.WorkerMemory != "" && hasResource(o.WorkerRequests, corev1.ResourceMemory) {
		return fmt.Errorf("--worker-memory and --worker-resources memory=… both set the workers' memory request: give one")
	}
	r := o.workerResources()
	for _, name := range slices.Sorted(maps.Keys(r.Requests)) {
		req := r.Requests[name]
		lim, ok := r.Limits[name]
		if ok && req.Cmp(lim) > 0 {
			return fmt.Errorf("the workers' %s request %s is above their limit %s (--worker-limits): Kubernetes refuses it", name, req.String(), lim.String())
		}
		if !overcommits(name) && (!ok || req.Cmp(lim) != 0) {
			return fmt.Errorf("the workers' %s request needs the same limit (--worker-limits %s=%s): Kubernetes does not overcommit it", name, name, req.String())
		}
	}
	for k, v := range o.WorkerNodeSelector {
		if _, err := ParseNodeSelector(k+"="+v, nil); err != nil {
			return fmt.Errorf("--worker-node-selector: %v", err)
		}
	}
	for _, t := range o.WorkerTolerations {
		if err := labelKey(t.Key); err != nil {
			return fmt.Errorf("--worker-toleration: %v", err)
		}
	}
	if o.TargetNode != "" {
		if errs := validation.IsDNS1123Subdomain(o.TargetNode); len(errs) > 0 {
			return fmt.Errorf("--target-node %q: want a node's name (%s)", o.TargetNode, brief(errs[0]))
		}
	}
	return nil
}

// overcommits tells whether a resource's request may be below its limit:
// not hugepages nor an extended resource (DOMAIN/NAME).
func overcommits(name corev1.ResourceName) bool {
	return !strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix) && !strings.Contains(string(name), "/")
}

func hasResource(l corev1.ResourceList, name corev1.ResourceName) bool {
	_, ok := l[name]
	return ok
}

// onTargetNode pins a target pod to TargetNode, through the scheduler (a
// node affinity on the node's name, as the DaemonSet controller places
// its pods) rather than spec.nodeName, so that the node's taints and room
// still count and an unschedulable target says why.
func (o Options) onTargetNode(spec *corev1.PodSpec) {
	if o.TargetNode == "" {
		return
	}
	if spec.Affinity == nil {
		spec.Affinity = &corev1.Affinity{}
	}
	spec.Affinity.NodeAffinity = &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
		NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{
			Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{o.TargetNode}}}}}}}
}

// placeWorkers sets the worker pod's node selector and tolerations.
func (o Options) placeWorkers(spec *corev1.PodSpec) {
	if len(o.WorkerNodeSelector) > 0 {
		spec.NodeSelector = maps.Clone(o.WorkerNodeSelector)
	}
	spec.Tolerations = slices.Clone(o.WorkerTolerations)
}
