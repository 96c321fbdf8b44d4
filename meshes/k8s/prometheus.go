package k8s

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"loadgen/results"
)

// Prometheus reads a watch's CPU and memory from a Prometheus server over
// the measured window, with one range query each. The default queries are
// the cAdvisor ones istio/tools' benchmarks use; {namespace}, {selector}
// and {container} in a query are replaced by the watch's.
type Prometheus struct {
	URL    string // e.g. http://prometheus.monitoring:9090
	CPU    string // cores; default DefaultPromCPU
	Memory string // bytes; default DefaultPromMemory
	Step   time.Duration
	Client *http.Client
}

// The default queries: cAdvisor's container metrics, as kubelets export them.
const (
	DefaultPromCPU    = `sum(rate(container_cpu_usage_seconds_total{namespace="{namespace}",container="{container}"}[1m]))`
	DefaultPromMemory = `sum(container_memory_working_set_bytes{namespace="{namespace}",container="{container}"})`
)

// Start implements Watcher: it notes the window's start; stop queries it.
func (p *Prometheus) Start(ctx context.Context, w Watch) (func() (results.ProcessCost, error), error) {
	from := time.Now()
	return func() (results.ProcessCost, error) {
		to := time.Now()
		c := results.ProcessCost{Name: w.Name, Selector: "prometheus:" + w.String(), Role: w.Role}
		cpu, err := p.Range(ctx, p.query(p.CPU, DefaultPromCPU, w), from, to)
		if err != nil {
			return c, err
		}
		mem, err := p.Range(ctx, p.query(p.Memory, DefaultPromMemory, w), from, to)
		if err != nil {
			return c, err
		}
		samples := make([]usage, 0, max(len(cpu), len(mem)))
		for i := range max(len(cpu), len(mem)) {
			var u usage
			if i < len(cpu) {
				u.cores = cpu[i]
			}
			if i < len(mem) {
				u.bytes = int64(mem[i])
			}
			u.pods = 1
			samples = append(samples, u)
		}
		c2 := reduce(w, samples, to.Sub(from))
		c2.Selector = c.Selector
		c2.Processes = 0 // Prometheus sums series: the pod count is not known
		return c2, nil
	}, nil
}

func (p *Prometheus) query(q, def string, w Watch) string {
	if q == "" {
		q = def
	}
	return strings.NewReplacer("{namespace}", w.Namespace, "{selector}", w.Selector, "{container}", w.Container).Replace(q)
}

// Range runs a range query over [from, to] and returns the values of its
// series, summed per timestamp, in time order.
func (p *Prometheus) Range(ctx context.Context, query string, from, to time.Time) ([]float64, error) {
	step := p.Step
	if step == 0 {
		step = 5 * time.Second
	}
	v := url.Values{"query": {query}, "start": {ts(from)}, "end": {ts(to)}, "step": {strconv.FormatFloat(step.Seconds(), 'f', -1, 64)}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(p.URL, "/")+"/api/v1/query_range", strings.NewReader(v.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	hc := p.Client
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("prometheus: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return nil, fmt.Errorf("prometheus: %v", err)
	}
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Values [][2]json.RawMessage `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("prometheus: %s: not a query answer (%v)", resp.Status, err)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("prometheus: query %q: %s", query, r.Error)
	}
	sums := map[float64]float64{}
	var times []float64
	for _, s := range r.Data.Result {
		for _, pair := range s.Values {
			var t float64
			var vs string
			if json.Unmarshal(pair[0], &t) != nil || json.Unmarshal(pair[1], &vs) != nil {
				return nil, fmt.Errorf("prometheus: query %q: a sample is not [time, \"value\"]", query)
			}
			x, err := strconv.ParseFloat(vs, 64)
			if err != nil {
				return nil, fmt.Errorf("prometheus: query %q: value %q: %v", query, vs, err)
			}
			if _, ok := sums[t]; !ok {
				times = append(times, t)
			}
			sums[t] += x
		}
	}
	slices.Sort(times)
	out := make([]float64, len(times))
	for i, t := range times {
		out[i] = sums[t]
	}
	return out, nil
}

func ts(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixNano())/1e9, 'f', 3, 64)
}
