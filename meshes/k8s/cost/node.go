package cost

import (
	"context"
	"fmt"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"loadgen/meshes/k8s/cluster"
	"loadgen/results"
)

// RoleNode is the role of a node's watch: the whole node's CPU and memory
// (what metrics.k8s.io's NodeMetrics and cAdvisor's root cgroup measure),
// beside its pods' figures.
const RoleNode = results.RoleNode

// NodeWatch is the watch of a node's whole usage.
func NodeWatch(node string) Watch {
	return Watch{Name: "node/" + node, Role: RoleNode, Node: node}
}

// The default selectors of a node's usage in Prometheus: cAdvisor's root
// cgroup (id="/") on the node's kubelet, labelled node as kube-prometheus'
// kubelet job and loadgen's test node label it.
const (
	DefaultPromNodeCPU    = `container_cpu_usage_seconds_total{id="/",node="{node}"}`
	DefaultPromNodeMemory = `container_memory_working_set_bytes{id="/",node="{node}"}`
)

// CheckNodeSelector refuses a node query that is not a series selector of
// one node's series.
func CheckNodeSelector(flag, q string) error {
	if q == "" {
		return nil
	}
	if strings.ContainsAny(q, "()[]") {
		return fmt.Errorf("%s %q: give a series selector (metric{labels}), not an expression: loadgen reads its raw samples within each step's load itself", flag, q)
	}
	if !strings.Contains(q, "{node}") {
		return fmt.Errorf("%s %q: the selector must select one node's series, e.g. node=\"{node}\": without it every node is counted", flag, q)
	}
	return nil
}

// startNode samples a node's NodeMetrics every interval until stop: the
// node's figure, as podMetricsCost makes a pod's.
func (p *PodMetrics) startNode(ctx context.Context, w Watch, win Window, every time.Duration) (func() (results.ProcessCost, error), error) {
	seen := map[time.Time]podSample{}
	var lastErr error
	get := func(ctx context.Context) {
		nm, err := p.Client.MetricsV1beta1().NodeMetricses().Get(ctx, w.Node, metav1.GetOptions{})
		if err != nil {
			lastErr = fmt.Errorf("%s: metrics.k8s.io: %v", w.Name, cluster.OneLine(err))
			return
		}
		lastErr = nil
		if nm.Window.Duration > 0 {
			seen[nm.Timestamp.Time] = podSample{at: nm.Timestamp.Time, window: nm.Window.Duration,
				cores: nm.Usage.Cpu().AsApproximateFloat64(), bytes: nm.Usage.Memory().Value()}
		}
	}
	stop := poll(ctx, every, get)
	return func() (results.ProcessCost, error) {
		stop()
		get(ctx)
		c := podMetricsCost(w, win, map[string]map[time.Time]podSample{w.Node: seen}, []Pod{{Name: w.Node}})
		if len(seen) == 0 && lastErr != nil {
			return c, lastErr
		}
		return c, nil
	}, nil
}

// poll calls f now and every interval until the returned stop is called
// (or ctx ends); stop returns once f has returned.
func poll(ctx context.Context, every time.Duration, f func(context.Context)) (stop func()) {
	stopc, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			f(ctx)
			select {
			case <-stopc:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(stopc); <-done }
}

// stopNode reads a node's samples from Prometheus after the load.
func (p *Prometheus) stopNode(ctx context.Context, w Watch, win Window) (results.ProcessCost, error) {
	sel := func(q, def string) string {
		if q == "" {
			q = def
		}
		return strings.ReplaceAll(q, "{node}", w.Node)
	}
	cpuSel := sel(p.NodeCPU, DefaultPromNodeCPU)
	name := "prometheus:" + cpuSel
	cpu, err := p.settled(ctx, cpuSel, win)
	if err != nil {
		return w.cost(name), err
	}
	mem, err := p.Samples(ctx, sel(p.NodeMemory, DefaultPromNodeMemory), win.From.Add(-lookback), time.Now())
	if err != nil {
		return w.cost(name), err
	}
	k := part{pod: w.Node}
	per := map[part]*measured{}
	most := 0
	for _, s := range dedupe(cpu) {
		in := s.measurements(win.From, win.To)
		most = max(most, len(in))
		if inc, span, ok := (series{points: in}).increase(); ok && per[k] == nil {
			m := &measured{}
			m.addCPU(inc/span.Seconds(), span, in[len(in)-1].t)
			per[k] = m
		}
	}
	if m := per[k]; m != nil {
		for _, s := range dedupe(mem) {
			for _, pt := range s.within(win.From, win.To) {
				m.addMem(int64(pt.v))
			}
		}
	}
	return total(w, name, win, per, []Pod{{Name: w.Node}}, false, func(part) string {
		if len(cpu) == 0 {
			return fmt.Sprintf("Prometheus has no series %s (is the kubelet's /metrics/cadvisor of node %s scraped, with a node label?)", cpuSel, w.Node)
		}
		return fmt.Sprintf("not measurable at this step length: Prometheus holds %d measurement(s) of node %s's CPU within the step's %v of load, and a figure needs two",
			most, w.Node, win.To.Sub(win.From).Round(time.Second))
	}), nil
}
