package main

import (
	"maps"
	"slices"
	"strings"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"

	"loadgen/meshes/k8s"
)

// placementFlags are the runner placement flags of the k8s commands: the
// grammars are meshes/k8s's (placement.go); each flag may be repeated.
func placementFlags(fl *pflag.FlagSet, o *k8s.Options) {
	fl.Var(nodeSelectorValue{&o.WorkerNodeSelector}, "worker-node-selector",
		"run the workers on nodes with these labels: KEY=VALUE[,KEY=VALUE…], e.g. pool=load (repeatable; default any node)")
	fl.Var(&tolerationsValue{p: &o.WorkerTolerations}, "worker-toleration",
		"let the workers run on nodes with this taint, e.g. dedicated=load:NoSchedule: KEY=VALUE:EFFECT, KEY=VALUE (any effect), KEY:EFFECT or KEY:Exists[:EFFECT] (any value), KEY (repeatable; default none)")
	fl.Var(resourcesValue{&o.WorkerRequests}, "worker-resources",
		"each worker's requests, as kubectl set resources --requests, e.g. cpu=2,memory=1Gi (its cpu and memory stand for --worker-cpu and --worker-memory, not beside them; repeatable)")
	fl.Var(resourcesValue{&o.WorkerLimits}, "worker-limits",
		"each worker's limits, as kubectl set resources --limits, e.g. cpu=4,memory=1Gi (none by default; repeatable)")
	fl.StringVar(&o.TargetNode, "target-node", "", "run the target on this node, by name, e.g. worker-2 (through the scheduler: its taints and room count; default any node); the workers keep off it")
}

type nodeSelectorValue struct{ p *map[string]string }

func (v nodeSelectorValue) Set(s string) error {
	m, err := k8s.ParseNodeSelector(s, *v.p)
	if err == nil {
		*v.p = m
	}
	return err
}
func (v nodeSelectorValue) String() string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(*v.p)) {
		kv = append(kv, k+"="+(*v.p)[k])
	}
	return strings.Join(kv, ",")
}
func (v nodeSelectorValue) Type() string { return "labels" }

type tolerationsValue struct{ p *[]corev1.Toleration }

func (v *tolerationsValue) Set(s string) error {
	t, err := k8s.ParseToleration(s)
	if err == nil {
		*v.p = append(*v.p, t)
	}
	return err
}
func (v *tolerationsValue) String() string {
	var out []string
	for _, t := range *v.p {
		out = append(out, k8s.FormatToleration(t))
	}
	return strings.Join(out, " ")
}
func (v *tolerationsValue) Type() string { return "taint" }

type resourcesValue struct{ p *corev1.ResourceList }

func (v resourcesValue) Set(s string) error {
	l, err := k8s.ParseResources(s, *v.p)
	if err == nil {
		*v.p = l
	}
	return err
}
func (v resourcesValue) String() string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(*v.p)) {
		q := (*v.p)[k]
		kv = append(kv, string(k)+"="+q.String())
	}
	return strings.Join(kv, ",")
}
func (v resourcesValue) Type() string { return "resources" }
