// Package cost records the CPU and memory of a run's pods over each step's
// load only: what to watch (Watch), when the load ran (Window), and two
// sources that sample it, metrics.k8s.io (metrics-server) and a
// Prometheus scraping the kubelets' cAdvisor.
package cost

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"loadgen/meshes/k8s/cluster"
	"loadgen/results"
)

// Watch names the pods and containers whose CPU and memory a step
// records: a mesh's proxies, its node agents, the ingress controller, the
// target.
type Watch struct {
	Name      string // in reports and assertions: istio-proxy, ztunnel, target, …
	Role      string // proxy or target
	Namespace string
	Selector  string // label selector of the pods
	// Containers are the containers counted, by name: a pod's figure is
	// theirs, summed, and a pod whose spec runs none of them is no pod of
	// the watch. Empty: the whole pod (its cgroup), for pods that are
	// proxies only (ztunnel, a waypoint, a gateway).
	Containers []string
	// Side is the side of the path a proxy serves: client (the workers'
	// sidecars), server (the target's), or empty (between them, or both).
	Side string
	// NodesOf, when set, keeps only the pods on the nodes of these pods:
	// a node agent (ztunnel) serving the run's pods.
	NodesOf *PodSet `json:"nodes_of,omitempty"`
	// Node, when set, makes the watch a node's whole usage (NodeWatch):
	// no namespace, selector or containers.
	Node string `json:"node,omitempty"`
}

// PodSet is a namespace's pods that match a label selector.
type PodSet struct {
	Namespace, Selector string
}

// Pod is a pod of a watch: its name and the watch's containers its spec
// runs (empty for a watch of whole pods).
type Pod struct {
	Name       string
	Containers []string
}

// String is the watch in a result's selector field.
func (w Watch) String() string {
	if w.Node != "" {
		return "k8s:node/" + w.Node
	}
	s := fmt.Sprintf("k8s:%s/%s", w.Namespace, w.Selector)
	if len(w.Containers) > 0 {
		s += "/" + strings.Join(w.Containers, ",")
	}
	return s
}

// cost is the watch's record before anything is measured.
func (w Watch) cost(selector string) results.ProcessCost {
	return results.ProcessCost{Name: w.Name, Selector: selector, Role: w.Role, Side: w.Side}
}

// WatchedPods lists, on the cluster, a watch's pods: those of its
// namespace that match its selector and whose spec runs one of its
// containers (an app container, or a native sidecar: an init container
// that restarts always), and with NodesOf, only those on a node where a
// pod NodesOf selects runs (the ztunnels serving the run's pods, not
// every node's). It is what the sources' Pods take.
func WatchedPods(c *cluster.Cluster) func(ctx context.Context, w Watch) ([]Pod, error) {
	return func(ctx context.Context, w Watch) ([]Pod, error) { return watchedPods(ctx, c, w) }
}

func watchedPods(ctx context.Context, c *cluster.Cluster, w Watch) ([]Pod, error) {
	l, err := c.Client.CoreV1().Pods(w.Namespace).List(ctx, metav1.ListOptions{LabelSelector: w.Selector})
	if err != nil {
		return nil, err
	}
	var nodes map[string]bool
	if w.NodesOf != nil {
		of, err := c.Client.CoreV1().Pods(w.NodesOf.Namespace).List(ctx, metav1.ListOptions{LabelSelector: w.NodesOf.Selector})
		if err != nil {
			return nil, err
		}
		nodes = map[string]bool{}
		for _, p := range of.Items {
			if p.Spec.NodeName != "" {
				nodes[p.Spec.NodeName] = true
			}
		}
	}
	out := make([]Pod, 0, len(l.Items))
	for i := range l.Items {
		p := &l.Items[i]
		if nodes != nil && !nodes[p.Spec.NodeName] {
			continue
		}
		pod := Pod{Name: p.Name}
		if len(w.Containers) > 0 {
			if pod.Containers = RunningContainers(p, w.Containers); len(pod.Containers) == 0 {
				continue
			}
		}
		out = append(out, pod)
	}
	return out, nil
}

// RunningContainers are those of names that the pod's spec runs beside
// its app: its containers and its native sidecars (init containers with
// restartPolicy Always), in the order of names. An init container that
// ends before the app starts (istio-init, linkerd-init) is not one.
func RunningContainers(p *corev1.Pod, names []string) []string {
	var out []string
	for _, n := range names {
		for _, c := range p.Spec.Containers {
			if c.Name == n {
				out = append(out, n)
			}
		}
		for _, c := range p.Spec.InitContainers {
			if c.Name == n && c.RestartPolicy != nil && *c.RestartPolicy == corev1.ContainerRestartPolicyAlways {
				out = append(out, n)
			}
		}
	}
	return out
}

// Window is when a step's load ran. A cluster's sources measure over
// windows of their own (metrics-server's 15 s; cAdvisor's housekeeping,
// 10 s jittered up to 20 s, backed off to 15–30 s for an idle container):
// a figure is made only of what they measured wholly within
// [From, To] — the load from a second after it began (its warm-up
// included: the same load, already connected) to its end — so that no
// idle time before the load, nor the step before, is in it.
type Window struct {
	From, To time.Time
	// Measured is the step's measured duration: CPUSeconds is the mean
	// cores over it.
	Measured time.Duration
}

// Watcher samples a watch over a step's load: Start when the load
// begins, the returned stop once it has ended (a source may publish what
// it measured a little later).
type Watcher interface {
	Start(ctx context.Context, w Watch, win Window) (stop func() (results.ProcessCost, error), err error)
}

// measured is what a source measured of one pod (or one of its
// containers) within a window: the mean of its samples, weighted by the
// time each spans.
type measured struct {
	cpuTime time.Duration // the time the CPU samples span
	cpuSum  float64       // Σ cores × seconds
	cpuMax  float64
	memSum  float64 // Σ bytes, over memSamples
	memN    int
	memMax  int64
	samples int
	// from and to bound the spans of the CPU samples.
	from, to time.Time
}

// addCPU adds a measurement of the mean cores over the span that ended at
// end.
func (m *measured) addCPU(cores float64, span time.Duration, end time.Time) {
	if from := end.Add(-span); m.from.IsZero() || from.Before(m.from) {
		m.from = from
	}
	if end.After(m.to) {
		m.to = end
	}
	m.cpuTime += span
	m.cpuSum += cores * span.Seconds()
	m.cpuMax = max(m.cpuMax, cores)
	m.samples++
}

func (m *measured) addMem(bytes int64) {
	m.memSum += float64(bytes)
	m.memN++
	m.memMax = max(m.memMax, bytes)
}

// part names what a source measured: a pod, or one container of it
// (empty: the pod, or the watch's containers summed per sample).
type part struct{ pod, container string }

// total adds up the watch's pods into its cost over the window; with
// byContainer, a pod's figure is the sum of its containers' series (a
// source that measures each container on a clock of its own). A pod or
// container the source measured no whole window of makes the figure
// unmeasurable (why says what the source's resolution is): a sum without
// it would be too low.
func total(w Watch, selector string, win Window, per map[part]*measured, want []Pod, byContainer bool, why func(p part) string) results.ProcessCost {
	c := w.cost(selector)
	if len(want) == 0 {
		c.Unmeasured = fmt.Sprintf("no pod matches %s in namespace %s", w.Selector, w.Namespace)
		if len(w.Containers) > 0 {
			c.Unmeasured += " with a container " + strings.Join(w.Containers, " or ")
		}
		return c
	}
	covered := time.Duration(-1)
	var from, to time.Time
	for _, pod := range want {
		keys := []part{{pod: pod.Name}}
		if byContainer && len(pod.Containers) > 0 {
			keys = keys[:0]
			for _, ct := range pod.Containers {
				keys = append(keys, part{pod.Name, ct})
			}
		}
		for _, k := range keys {
			m := per[k]
			if m == nil || m.cpuTime <= 0 {
				u := w.cost(selector)
				u.Unmeasured = why(k)
				return u
			}
			c.CPUMean += m.cpuSum / m.cpuTime.Seconds()
			c.CPUMax += m.cpuMax
			if m.memN > 0 {
				c.MemMean += int64(m.memSum / float64(m.memN))
				c.MemMax += m.memMax
			}
			c.Samples += m.samples
			if covered < 0 || m.cpuTime < covered {
				covered, from, to = m.cpuTime, m.from, m.to
			}
		}
		c.Processes++
	}
	c.Covered = covered.Seconds()
	c.CoveredFrom, c.CoveredTo = &from, &to
	c.CPUSeconds = c.CPUMean * win.Measured.Seconds()
	return c
}

// names are the pods' names.
func names(pods []Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	return out
}

// unionPods adds b's pods to a's, by name, in name order.
func unionPods(a, b []Pod) []Pod {
	by := map[string]Pod{}
	for _, p := range append(append([]Pod(nil), a...), b...) {
		by[p.Name] = p
	}
	out := make([]Pod, 0, len(by))
	for _, p := range by {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
