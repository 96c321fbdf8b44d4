package cost

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"

	"loadgen/meshes/k8s/cluster"
	"loadgen/results"
)

// PodMetrics samples metrics.k8s.io (metrics-server): each pod's
// containers' usage as metrics-server last computed it, the mean over a
// window of its own (Window, about its --metric-resolution: 15 s by
// default) that ends at Timestamp. Only the samples whose window lies
// wholly within the step's load count, each once.
type PodMetrics struct {
	Client metricsclient.Interface
	Every  time.Duration // how often to list (default 5 s)
	// Pods lists the pods of a watch (namespace, label selector, the
	// containers their specs run), so that a pod metrics-server has not
	// measured yet is told from no pod; nil: the pods are those
	// metrics-server lists.
	Pods func(ctx context.Context, w Watch) ([]Pod, error)
}

// NewPodMetrics is a PodMetrics sampler for the cluster.
func NewPodMetrics(c *cluster.Cluster) (*PodMetrics, error) {
	mc, err := metricsclient.NewForConfig(c.Config)
	if err != nil {
		return nil, err
	}
	return &PodMetrics{Client: mc, Pods: WatchedPods(c)}, nil
}

// Check tells whether the cluster serves metrics.k8s.io.
func (p *PodMetrics) Check(ctx context.Context, namespace string) error {
	_, err := p.Client.MetricsV1beta1().PodMetricses(namespace).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return fmt.Errorf("metrics.k8s.io: %v (install metrics-server, or give --prometheus URL)", cluster.OneLine(err))
	}
	return nil
}

// podSample is one of metrics-server's measurements of a pod.
type podSample struct {
	at     time.Time
	window time.Duration
	cores  float64
	bytes  int64
}

// Start implements Watcher: it lists the watch's PodMetrics every Every
// until stop, keeping each pod's samples by their timestamps.
func (p *PodMetrics) Start(ctx context.Context, w Watch, win Window) (func() (results.ProcessCost, error), error) {
	every := p.Every
	if every == 0 {
		every = 5 * time.Second
	}
	if w.Node != "" {
		return p.startNode(ctx, w, win, every)
	}
	seen := map[string]map[time.Time]podSample{} // pod → timestamp → sample
	var lastErr error
	var pods []Pod
	list := func(ctx context.Context) {
		l, err := p.Client.MetricsV1beta1().PodMetricses(w.Namespace).List(ctx, metav1.ListOptions{LabelSelector: w.Selector})
		if err != nil {
			lastErr = fmt.Errorf("%s: metrics.k8s.io: %v", w.Name, cluster.OneLine(err))
			return
		}
		lastErr = nil
		for i := range l.Items {
			pm := &l.Items[i]
			s, ok := sampleOf(pm, w.Containers, containersOf(pods, pm.Name))
			if !ok {
				continue
			}
			if seen[pm.Name] == nil {
				seen[pm.Name] = map[time.Time]podSample{}
			}
			seen[pm.Name][s.at] = s
		}
	}
	addPods := func(ctx context.Context) error {
		if p.Pods == nil {
			return nil
		}
		ps, err := p.Pods(ctx, w)
		if err != nil {
			return fmt.Errorf("%s: pods of %s: %v", w.Name, w.Selector, cluster.OneLine(err))
		}
		pods = unionPods(pods, ps)
		return nil
	}
	if err := addPods(ctx); err != nil {
		return nil, err
	}
	stop := poll(ctx, every, list)
	return func() (results.ProcessCost, error) {
		stop()
		list(ctx) // what metrics-server published since the last list
		if err := addPods(ctx); err != nil {
			return w.cost(w.String()), err
		}
		c := podMetricsCost(w, win, seen, pods)
		if len(seen) == 0 && lastErr != nil {
			return c, lastErr
		}
		return c, nil
	}, nil
}

// sampleOf sums a PodMetrics' containers: the watch's (every one, for a
// watch of whole pods). A sample is kept only when it has each container
// the pod's spec runs of them (want; nil: those it has), so that a pod's
// figure is never the sum of fewer containers than it ran.
func sampleOf(pm *metricsv1beta1.PodMetrics, containers, want []string) (podSample, bool) {
	s := podSample{at: pm.Timestamp.Time, window: pm.Window.Duration}
	found := 0
	for _, c := range pm.Containers {
		if len(containers) > 0 && !slices.Contains(containers, c.Name) {
			continue
		}
		s.cores += c.Usage.Cpu().AsApproximateFloat64()
		s.bytes += c.Usage.Memory().Value()
		found++
	}
	return s, found > 0 && found >= len(want) && s.window > 0
}

// containersOf are the containers the pod named runs of a watch's, as the
// API server listed them; nil when it did not list the pod.
func containersOf(pods []Pod, name string) []string {
	for _, p := range pods {
		if p.Name == name {
			return p.Containers
		}
	}
	return nil
}

// podMetricsCost is the watch's cost from the samples whose window lies
// within the step's load: per pod, the mean over its samples weighted by
// their windows; the pods summed.
// The pods are the watch's as the API server lists them (nil: those
// metrics-server lists).
func podMetricsCost(w Watch, win Window, seen map[string]map[time.Time]podSample, pods []Pod) results.ProcessCost {
	per := map[part]*measured{}
	listed := pods == nil
	var window time.Duration
	for pod, samples := range seen {
		if listed {
			pods = append(pods, Pod{Name: pod})
		}
		m := &measured{}
		for _, s := range samples {
			window = max(window, s.window)
			if s.at.Add(-s.window).Before(win.From) || s.at.After(win.To) {
				continue
			}
			m.addCPU(s.cores, s.window, s.at)
			m.addMem(s.bytes)
		}
		per[part{pod: pod}] = m
	}
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
	load := win.To.Sub(win.From).Round(time.Second)
	return total(w, w.String(), win, per, pods, false, func(k part) string {
		pod := k.pod
		if window == 0 {
			window = 15 * time.Second
		}
		kind := "pod"
		if w.Node != "" {
			kind = "node"
		}
		if len(seen[pod]) == 0 {
			return fmt.Sprintf("not measurable at this step length: metrics.k8s.io had no sample of %s %s yet (metrics-server measures over %v windows, from its second scrape of a new pod; the step's load lasted %v)",
				kind, pod, window.Round(time.Second), load)
		}
		return fmt.Sprintf("not measurable at this step length: metrics.k8s.io measures %s %s over %v windows, and none lay within the step's %v of load (make the step longer than twice that, or use --prometheus)",
			kind, pod, window.Round(time.Second), load)
	})
}
