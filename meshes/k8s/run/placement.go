package run

import (
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cost"
	"loadgen/results"
)

// awayFrom are the pods of the proxies found behind the published
// addresses (an ingress's, a gateway's), which the workers keep off the
// nodes of.
func (k *Coordinator) awayFrom() []k8s.PodsOf {
	var out []k8s.PodsOf
	for _, w := range k.proxies {
		sel, err := metav1.ParseToLabelSelector(w.Selector)
		if err != nil {
			continue
		}
		out = append(out, k8s.PodsOf{Namespace: w.Namespace, Selector: sel})
	}
	return out
}

// placement records where step ran: the Kubernetes version, each pod of
// the comparison (the targets, this step's workers, the proxies' pods) on
// its node with its proxies' images, and the workers' resources as their
// Job asked. What cannot be listed is left out: the step's figures do not
// depend on it.
func (k *Coordinator) placement(ctx context.Context, step int, job *batchv1.Job) *results.Placement {
	o := k.Options
	p := &results.Placement{Kubernetes: k.kubernetesVersion()}
	if cs := job.Spec.Template.Spec.Containers; len(cs) > 0 {
		p.WorkerRequests, p.WorkerLimits = quantities(cs[0].Resources.Requests), quantities(cs[0].Resources.Limits)
	}
	sidecar := k8s.SidecarContainer(o.Mesh)
	add := func(role string, pods []corev1.Pod, proxy func(name string) bool) {
		for i := range pods {
			pod := &pods[i]
			pp := results.PlacedPod{Role: role, Name: pod.Name, Node: pod.Spec.NodeName}
			if role == "" {
				pp.Role = "target"
				if pod.Labels[k8s.LabelName] == k8s.TargetDirectName {
					pp.Role = "direct-target"
				}
			}
			for _, c := range append(slices.Clone(pod.Spec.InitContainers), pod.Spec.Containers...) {
				if proxy(c.Name) && len(cost.RunningContainers(pod, []string{c.Name})) > 0 {
					pp.Proxies = append(pp.Proxies, containerTerms(c))
				}
			}
			p.Pods = append(p.Pods, pp)
		}
	}
	isSidecar := func(name string) bool { return sidecar != "" && name == sidecar }
	add("", k.pods(ctx, o.Namespace, o.TargetSelector(), nil), isSidecar)
	add("worker", k.pods(ctx, o.Namespace, k8s.StepSelector(o.RunID, step), nil), isSidecar)
	ws, _ := Watches(o, step)
	for _, w := range append(slices.Clone(k.proxies), ws...) {
		if w.Role != "proxy" || w.Side != "" {
			continue // the sidecars are in the targets' and the workers' pods
		}
		add(w.Name, k.pods(ctx, w.Namespace, w.Selector, w.NodesOf), func(string) bool { return true })
	}
	return p
}

// containerTerms is a proxy container as its spec ran it: its image,
// worker threads and resources. Each mesh's injector writes its own
// terms, which may differ from what loadgen asked (a mesh-wide default,
// a LimitRange, an injector that ignores an annotation): these are
// what the step ran with.
func containerTerms(c corev1.Container) results.ContainerImage {
	t := results.ContainerImage{Container: c.Name, Image: c.Image,
		Requests: quantities(c.Resources.Requests), Limits: quantities(c.Resources.Limits)}
	// Envoy's --concurrency (Istio's injector passes ProxyConfig's
	// concurrency to pilot-agent so), Linkerd's proxy runtime
	// (LINKERD2_PROXY_CORES, its proxy's main.rs: "the appropriate number
	// of cores: LINKERD2_PROXY_CORES env or the number of available
	// CPUs"), App Mesh's Envoy image (ENVOY_CONCURRENCY).
	if v, ok := flagValue(controllerArgs(c), "concurrency"); ok {
		t.Threads, _ = strconv.Atoi(v)
	}
	for _, e := range c.Env {
		switch e.Name {
		case "LINKERD2_PROXY_CORES", "ENVOY_CONCURRENCY":
			t.Threads, _ = strconv.Atoi(e.Value)
		case "PROXY_CONFIG": // Istio's ProxyConfig, as JSON, where its injector left out --concurrency
			var pc struct {
				Concurrency int `json:"concurrency"`
			}
			if json.Unmarshal([]byte(e.Value), &pc) == nil && pc.Concurrency > 0 && t.Threads == 0 {
				t.Threads = pc.Concurrency
			}
		}
	}
	t.Threads = max(t.Threads, 0)
	return t
}

// stepNodes are the nodes that run step's pods: its targets, its
// workers and the proxies' pods, in name order.
func (k *Coordinator) stepNodes(ctx context.Context, step int) []string {
	var nodes []string
	for _, p := range k.placement(ctx, step, &batchv1.Job{}).Pods {
		if p.Node != "" && !slices.Contains(nodes, p.Node) {
			nodes = append(nodes, p.Node)
		}
	}
	sort.Strings(nodes)
	return nodes
}

// pods lists a namespace's pods a selector selects, and with nodesOf only
// those on the nodes of these (a node agent serving the run's pods), in
// name order; none when they cannot be listed.
func (k *Coordinator) pods(ctx context.Context, ns, selector string, nodesOf *cost.PodSet) []corev1.Pod {
	l, err := k.Cluster.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		k.sayOnce("placement: pods %s in %s: %v", selector, ns, err)
		return nil
	}
	pods := l.Items
	if nodesOf != nil {
		nodes := map[string]bool{}
		for _, p := range k.pods(ctx, nodesOf.Namespace, nodesOf.Selector, nil) {
			nodes[p.Spec.NodeName] = true
		}
		pods = slices.DeleteFunc(pods, func(p corev1.Pod) bool { return !nodes[p.Spec.NodeName] })
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	return pods
}

// kubernetesVersion is the API server's version, asked once per run.
func (k *Coordinator) kubernetesVersion() string {
	if k.version == "" {
		v, err := k.Cluster.Client.Discovery().ServerVersion()
		if err != nil {
			k.sayOnce("placement: the API server's version: %v", err)
			return ""
		}
		k.version = v.GitVersion
	}
	return k.version
}

// quantities writes a resource list as cpu=100m,memory=64Mi.
func quantities(l corev1.ResourceList) string {
	var out []string
	for name, q := range l {
		out = append(out, string(name)+"="+q.String())
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}
