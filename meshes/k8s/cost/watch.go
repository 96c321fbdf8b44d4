// Package cost records the CPU and memory of a run's pods over each step's
// load only: what to watch (Watch), when the load ran (Window), and two
// sources that sample it, metrics.k8s.io (metrics-server) and a
// Prometheus scraping the kubelets' cAdvisor.
package cost

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"loadgen/meshes/k8s/cluster"
	"loadgen/results"
)

// Watch names the pods and container whose CPU and memory a step records:
// a mesh's proxies, its node agents, the ingress controller, the target.
type Watch struct {
	Name      string // in reports and assertions: istio-proxy, ztunnel, …
	Role      string // proxy or target
	Namespace string
	Selector  string // label selector of the pods
	Container string // empty: every container of the pods
	// NodesOf, when set, keeps only the pods on the nodes of these pods:
	// a node agent (ztunnel) serving the run's pods.
	NodesOf *PodSet `json:"nodes_of,omitempty"`
}

// PodSet is a namespace's pods that match a label selector.
type PodSet struct {
	Namespace, Selector string
}

// String is the watch in a result's selector field.
func (w Watch) String() string {
	s := fmt.Sprintf("k8s:%s/%s", w.Namespace, w.Selector)
	if w.Container != "" {
		s += "/" + w.Container
	}
	return s
}

// WatchedPods lists, on the cluster, the names of a watch's pods: those
// of its namespace that match its selector, and with NodesOf, only those
// on a node where a pod NodesOf selects runs (the ztunnels serving the
// run's pods, not every node's). It is what the sources' Pods take.
func WatchedPods(c *cluster.Cluster) func(ctx context.Context, w Watch) ([]string, error) {
	return func(ctx context.Context, w Watch) ([]string, error) { return watchedPods(ctx, c, w) }
}

func watchedPods(ctx context.Context, c *cluster.Cluster, w Watch) ([]string, error) {
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
	out := make([]string, 0, len(l.Items))
	for _, p := range l.Items {
		if nodes != nil && !nodes[p.Spec.NodeName] {
			continue
		}
		out = append(out, p.Name)
	}
	return out, nil
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

// total adds up the watch's pods (or series) into its cost over the
// window. A pod the source measured no whole window of makes the figure
// unmeasurable (why says what the source's resolution is): a sum without
// it would be too low.
func total(w Watch, selector string, win Window, per map[string]*measured, want []string, why func(key string) string) results.ProcessCost {
	c := results.ProcessCost{Name: w.Name, Selector: selector, Role: w.Role}
	if len(want) == 0 {
		c.Unmeasured = fmt.Sprintf("no pod matches %s in namespace %s", w.Selector, w.Namespace)
		return c
	}
	covered := time.Duration(-1)
	var from, to time.Time
	for _, k := range want {
		m := per[k]
		if m == nil || m.cpuTime <= 0 {
			c.Unmeasured = why(k)
			return results.ProcessCost{Name: c.Name, Selector: c.Selector, Role: c.Role, Unmeasured: c.Unmeasured}
		}
		cores := m.cpuSum / m.cpuTime.Seconds()
		c.CPUMean += cores
		c.CPUMax += m.cpuMax
		if m.memN > 0 {
			c.MemMean += int64(m.memSum / float64(m.memN))
			c.MemMax += m.memMax
		}
		c.Samples += m.samples
		c.Processes++
		if covered < 0 || m.cpuTime < covered {
			covered, from, to = m.cpuTime, m.from, m.to
		}
	}
	c.Covered = covered.Seconds()
	c.CoveredFrom, c.CoveredTo = &from, &to
	c.CPUSeconds = c.CPUMean * win.Measured.Seconds()
	return c
}
