package cost

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"loadgen/meshes/k8s/cluster"
	"loadgen/results"
)

// Prometheus reads a watch's CPU and memory from a Prometheus that
// scrapes the kubelets' cAdvisor metrics (/metrics/cadvisor), as
// istio/tools' benchmarks and kube-prometheus do. It reads the raw
// samples within the step's load, not a rate() over a fixed range
// (which would reach into the step before): CPU is the increase of the
// cumulative counter between a series' first and last measurement in the
// window over the time between them, memory the mean of the working set's
// samples. A sample's time is cAdvisor's own, or the scrape's where
// Prometheus does not honour the exported timestamps (kube-prometheus'
// kubelet ServiceMonitor: honorTimestamps false), and the value scraped
// then is cAdvisor's last measurement, made at most one housekeeping
// interval before; so a sample counts only when the one before it lies
// within the window too, and only where its value changed (a new
// measurement, not the last one scraped again). The pods are the watch's, resolved through the API server
// (cAdvisor's series carry pod names, not pod labels); a watch of
// containers reads each container's own series and sums them per pod, so
// that the target's figure is its own containers' and not its pod's
// cgroup, which holds an injected proxy too.
type Prometheus struct {
	URL string // e.g. http://prometheus.monitoring:9090
	// CPU is a series selector of a cumulative CPU-seconds counter, Memory
	// one of a bytes gauge; {namespace}, {pods} (a regular expression of
	// the watch's pod names) and {container} (one of its containers'
	// names) are replaced. Defaults: DefaultPromCPU, DefaultPromMemory.
	CPU, Memory string
	// NodeCPU and NodeMemory are a node's (NodeWatch), {node} replaced by
	// its name. Defaults: DefaultPromNodeCPU, DefaultPromNodeMemory.
	NodeCPU, NodeMemory string
	// Pods lists the pods of a watch (namespace, label selector, the
	// containers their specs run).
	Pods   func(ctx context.Context, w Watch) ([]Pod, error)
	Client *http.Client
	// MaxWait bounds how long stop waits, after the load, for Prometheus
	// to have scraped every series past its end (default 45 s).
	MaxWait time.Duration
}

// lookback is how far before the window samples are read: far enough to
// hold the sample before its first one at any usual scrape interval.
const lookback = 3 * time.Minute

// The default selectors: cAdvisor's container metrics as the kubelet
// exports them. {container} is a regular expression of the watch's
// containers' names; a watch of whole pods (no containers) reads
// cAdvisor's pod cgroup series (container="", without an image: not the
// sandbox).
const (
	DefaultPromCPU    = `container_cpu_usage_seconds_total{namespace="{namespace}",pod=~"{pods}",container=~"{container}"}`
	DefaultPromMemory = `container_memory_working_set_bytes{namespace="{namespace}",pod=~"{pods}",container=~"{container}"}`
)

// CheckSelector refuses a query that is not a series selector: loadgen
// takes the increase over the window itself.
func CheckSelector(flag, q string) error {
	if q == "" {
		return nil
	}
	if strings.ContainsAny(q, "()[]") {
		return fmt.Errorf("%s %q: give a series selector (metric{labels}), not an expression: loadgen reads its raw samples within each step's load itself, as rate() over a fixed range would reach into the step before", flag, q)
	}
	if !strings.Contains(q, "{pods}") {
		return fmt.Errorf("%s %q: the selector must select the watched pods, pod=~\"{pods}\": without it every pod of the namespace (the workers too) is counted", flag, q)
	}
	return nil
}

// Start implements Watcher: it notes the watch's pods; stop reads the
// window's samples (after the load, so that Prometheus has scraped what
// cAdvisor measured last).
func (p *Prometheus) Start(ctx context.Context, w Watch, win Window) (func() (results.ProcessCost, error), error) {
	if w.Node != "" {
		return func() (results.ProcessCost, error) { return p.stopNode(ctx, w, win) }, nil
	}
	first, err := p.pods(ctx, w)
	if err != nil {
		return nil, err
	}
	return func() (results.ProcessCost, error) {
		sel := "prometheus:" + w.String()
		then, err := p.pods(ctx, w)
		if err != nil {
			return w.cost(sel), err
		}
		pods := unionPods(first, then)
		if len(pods) == 0 {
			return total(w, sel, win, nil, nil, true, nil), nil
		}
		cpu, err := p.settled(ctx, p.selector(p.CPU, DefaultPromCPU, w, pods), win)
		if err != nil {
			return w.cost(sel), err
		}
		mem, err := p.Samples(ctx, p.selector(p.Memory, DefaultPromMemory, w, pods), win.From.Add(-lookback), time.Now())
		if err != nil {
			return w.cost(sel), err
		}
		per := map[part]*measured{}
		seen := map[part]int{}            // pod and container → the most measurements a series of it has in the window
		every := map[part]time.Duration{} // … and how often its series is sampled
		idle := map[part]float64{}        // … idle over the step: its rate
		busy := map[part]string{}         // … or why it is not taken for idle
		for _, s := range dedupe(cpu) {
			k := s.part(w)
			in := s.measurements(win.From, win.To)
			seen[k] = max(seen[k], len(in))
			every[k] = max(every[k], s.every())
			if inc, span, ok := (series{points: in}).increase(); ok {
				m := per[k]
				if m == nil {
					m = &measured{}
					per[k] = m
				}
				m.addCPU(inc/span.Seconds(), span, in[len(in)-1].t)
			} else if cores, why := s.idle(win.From, win.To); why == "" {
				idle[k] = cores
			} else {
				busy[k] = why
			}
		}
		// Too few new measurements because there was nothing to measure:
		// an idle container (the target's gRPC server in an HTTP step) is
		// its small rate, not a reason to drop the figure; it counts over
		// the span the measured parts cover, so that it widens no figure's
		// window.
		from, to := win.From, win.To
		if lo, hi := coveredBy(per); hi.After(lo) {
			from, to = lo, hi
		}
		for k, cores := range idle {
			if per[k] != nil {
				continue
			}
			m := &measured{}
			m.addCPU(cores, to.Sub(from), to)
			per[k] = m
			seen[k] = max(seen[k], 2)
		}
		for _, s := range dedupe(mem) {
			if m := per[s.part(w)]; m != nil {
				for _, pt := range s.within(win.From, win.To) {
					m.addMem(int64(pt.v))
				}
			}
		}
		load := win.To.Sub(win.From).Round(time.Second)
		// A pod with no series in the window: too new for cAdvisor to have
		// measured it within the load, or is the metric not scraped at all?
		scraped := -1
		return total(w, sel, win, per, pods, true, func(k part) string {
			name := k.pod
			if k.container != "" {
				name = fmt.Sprintf("%s's container %s", k.pod, k.container)
			}
			if _, ok := seen[k]; !ok && scraped < 0 {
				scraped = 0
				if p.scraped(ctx, p.selector(p.CPU, DefaultPromCPU, w, pods)) {
					scraped = 1
				}
			}
			if _, ok := seen[k]; !ok && scraped == 1 {
				return fmt.Sprintf("not measurable at this step length: Prometheus has no sample of pod %s's CPU around the step's %v of load (%s)",
					name, load, shortestStep(0))
			}
			if _, ok := seen[k]; !ok {
				return fmt.Sprintf("Prometheus has no CPU series of pod %s/%s (is the kubelet's /metrics/cadvisor of its node scraped?)", w.Namespace, name)
			}
			notIdle := ""
			if why := busy[k]; why != "" {
				notIdle = "; nor is it idle: " + why
			}
			return fmt.Sprintf("not measurable at this step length: Prometheus holds %d measurement(s) of pod %s's CPU within the step's %v of load, and a figure needs two (%s)%s",
				seen[k], name, load, shortestStep(every[k]), notIdle)
		}), nil
	}, nil
}

// shortestStep says why a step needs three of a series' sample intervals
// of load (warm-up and duration), and how long that is for this one
// (every: how often its samples come; 0: not known).
func shortestStep(every time.Duration) string {
	why := "a sample counts once the one before it lies within the load too: its value is cAdvisor's last measurement, up to one housekeeping interval old, and its time the scrape's where Prometheus does not honour cAdvisor's timestamps (kube-prometheus' kubelet ServiceMonitor)"
	if every <= 0 {
		return why + "; at kube-prometheus' 30 s scrape interval, steps whose load (warm-up and duration) lasts 91 s or more get a figure"
	}
	return fmt.Sprintf("%s; this series' samples come every %v, so steps whose load (warm-up and duration) lasts %v or more get a figure",
		why, every.Round(time.Second), MinStep(every))
}

// MinStep is the shortest load (warm-up and duration) of which the
// Prometheus source always has a figure, for a series sampled every
// interval (Prometheus's scrape interval, or cAdvisor's housekeeping
// where it is longer and the exported timestamps are honoured): the
// first second is not measured, and the window must hold three samples,
// the first of them only the one before the first measurement.
func MinStep(interval time.Duration) time.Duration {
	return (3*interval + time.Second).Round(time.Second)
}

// settled reads a selector's samples around the window once Prometheus
// holds every series past the window's end (a measurement made before the
// end may be scraped after it) or ended (no sample for two of its
// intervals: a worker's container that stopped with its load), or once
// MaxWait has passed since the end.
func (p *Prometheus) settled(ctx context.Context, selector string, win Window) ([]series, error) {
	wait := p.MaxWait
	if wait == 0 {
		wait = 45 * time.Second
	}
	for {
		ss, err := p.Samples(ctx, selector, win.From.Add(-lookback), time.Now())
		if err != nil {
			return nil, err
		}
		// No series yet: a metric not scraped at all, or a scrape still to
		// come; not worth the whole wait.
		past := len(ss) > 0 || time.Since(win.To) > min(wait, 10*time.Second)
		for _, s := range ss {
			n := len(s.points)
			if n == 0 {
				past = false
				continue
			}
			last := s.points[n-1].t
			ended := s.every() > 0 && time.Since(last) > 2*s.every()
			if !last.After(win.To) && !ended {
				past = false
			}
		}
		if past || time.Since(win.To) > wait {
			return ss, nil
		}
		select {
		case <-ctx.Done():
			return ss, nil
		case <-time.After(time.Second):
		}
	}
}

// scraped tells whether Prometheus holds the selector's metric at all
// (any series of its name in the last 5 minutes).
func (p *Prometheus) scraped(ctx context.Context, selector string) bool {
	name, _, _ := strings.Cut(selector, "{")
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Result []json.RawMessage `json:"result"`
		} `json:"data"`
	}
	q := fmt.Sprintf("count(last_over_time(%s[5m]))", strings.TrimSpace(name))
	if err := p.get(ctx, "/api/v1/query", url.Values{"query": {q}}, &r); err != nil {
		return false
	}
	return r.Status == "success" && len(r.Data.Result) > 0
}

func (p *Prometheus) pods(ctx context.Context, w Watch) ([]Pod, error) {
	if p.Pods == nil {
		return nil, fmt.Errorf("%s: no way to list its pods", w.Name)
	}
	ps, err := p.Pods(ctx, w)
	if err != nil {
		return nil, fmt.Errorf("%s: pods of %s: %v", w.Name, w.Selector, cluster.OneLine(err))
	}
	return ps, nil
}

// selector fills a selector's placeholders. A watch of whole pods reads
// the pod cgroup's series: container="" and no image (the sandbox's
// series has the pause image).
func (p *Prometheus) selector(q, def string, w Watch, pods []Pod) string {
	if q == "" {
		q = def
		if len(w.Containers) == 0 {
			q = strings.Replace(q, `container=~"{container}"}`, `container="",image=""}`, 1)
		}
	}
	return strings.NewReplacer("{namespace}", w.Namespace, "{pods}", alternation(names(pods)),
		"{container}", alternation(w.Containers)).Replace(q)
}

// alternation is a regular expression that matches any of the names,
// exactly, inside a PromQL string.
func alternation(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		// RE2 inside a PromQL string: each backslash doubled.
		quoted[i] = strings.ReplaceAll(regexp.QuoteMeta(n), `\`, `\\`)
	}
	return strings.Join(quoted, "|")
}

// series is one time series' raw samples, in time order.
type series struct {
	pod, container string
	labels         map[string]string
	points         []point
}

// part is what the series measured of the watch: a pod's container, or a
// whole pod.
func (s series) part(w Watch) part {
	if len(w.Containers) == 0 {
		return part{pod: s.pod}
	}
	return part{s.pod, s.container}
}

type point struct {
	t time.Time
	v float64
}

// measurements are the series' samples that are new measurements made
// within [from, to]: a sample whose value differs from the one before it
// (else it is the last measurement scraped again) and whose time and the
// time of the sample before it lie within the window. A measurement
// scraped at t was made after the scrape before it, at the latest at t;
// where Prometheus honours cAdvisor's timestamps, at t itself.
func (s series) measurements(from, to time.Time) []point {
	var out []point
	for i := 1; i < len(s.points); i++ {
		prev, pt := s.points[i-1], s.points[i]
		if pt.v != prev.v && !prev.t.Before(from) && !pt.t.After(to) {
			out = append(out, pt)
		}
	}
	return out
}

// coveredBy is the span the measured parts cover together (zero times
// for none).
func coveredBy(per map[part]*measured) (from, to time.Time) {
	for _, m := range per {
		if from.IsZero() || m.from.Before(from) {
			from = m.from
		}
		if m.to.After(to) {
			to = m.to
		}
	}
	return from, to
}

// IdleCores is the CPU below which a container whose counter hardly
// moved is idle: cAdvisor re-measures an idle container seldom, so its
// series holds too few new measurements within a step, though there is
// nothing to measure. A busy container is far above it.
const IdleCores = 0.01

// idle tells whether the series' counter rose by less than IdleCores over
// the samples that enclose [from, to] (the last at or before from, the
// first at or after to), and its rate there: a container that did nothing
// in the step, whatever cAdvisor's housekeeping and Prometheus' scrape
// times. A series that does not enclose the window is not known idle;
// why says what kept it from being taken for idle ("" when it is).
func (s series) idle(from, to time.Time) (cores float64, why string) {
	var p0, p1 *point
	for i := range s.points {
		pt := &s.points[i]
		if !pt.t.After(from) {
			p0 = pt
		}
		if p1 == nil && !pt.t.Before(to) {
			p1 = pt
		}
	}
	switch {
	case len(s.points) == 0:
		return 0, "it has no sample"
	case p0 == nil:
		return 0, fmt.Sprintf("its first sample is at %s, %v after the load began (no measurement of the container before it)",
			s.points[0].t.UTC().Format("15:04:05"), s.points[0].t.Sub(from).Round(time.Second))
	case p1 == nil:
		last := s.points[len(s.points)-1].t
		return 0, fmt.Sprintf("its last sample is at %s, %v before the load ended", last.UTC().Format("15:04:05"), to.Sub(last).Round(time.Second))
	case !p1.t.After(p0.t):
		return 0, "its samples around the load are at one time"
	case p1.v < p0.v:
		return 0, "its counter fell over the load (the container restarted)"
	}
	cores = (p1.v - p0.v) / p1.t.Sub(p0.t).Seconds()
	if cores >= IdleCores {
		return cores, fmt.Sprintf("it rose by %.3f cores over the load, more than an idle container's %v", cores, IdleCores)
	}
	return cores, ""
}

// within are the series' samples within [from, to] whose sample before
// lies within it too: a gauge's values over the window.
func (s series) within(from, to time.Time) []point {
	var out []point
	for i := 1; i < len(s.points); i++ {
		if !s.points[i-1].t.Before(from) && !s.points[i].t.After(to) {
			out = append(out, s.points[i])
		}
	}
	return out
}

// every is how often the series is sampled: the median time between its
// samples (0 with fewer than two).
func (s series) every() time.Duration {
	if len(s.points) < 2 {
		return 0
	}
	gaps := make([]time.Duration, 0, len(s.points)-1)
	for i := 1; i < len(s.points); i++ {
		gaps = append(gaps, s.points[i].t.Sub(s.points[i-1].t))
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2]
}

// increase is a counter's increase from its first sample to its last and
// the time between them; a drop (a restarted container) counts from zero,
// as Prometheus' increase() does.
func (s series) increase() (float64, time.Duration, bool) {
	if len(s.points) < 2 {
		return 0, 0, false
	}
	var inc float64
	for i := 1; i < len(s.points); i++ {
		d := s.points[i].v - s.points[i-1].v
		if d < 0 {
			d = s.points[i].v
		}
		inc += d
	}
	span := s.points[len(s.points)-1].t.Sub(s.points[0].t)
	return inc, span, span > 0
}

// dedupe keeps one series per pod and container: a Prometheus that
// scrapes both the kubelet's /metrics/cadvisor and /metrics/resource has
// the same metric twice. The one with the most samples is kept.
func dedupe(ss []series) []series {
	best := map[string]int{}
	var out []series
	for _, s := range ss {
		k := s.pod + "\x00" + s.container
		if i, ok := best[k]; ok {
			if len(s.points) > len(out[i].points) {
				out[i] = s
			}
			continue
		}
		best[k] = len(out)
		out = append(out, s)
	}
	return out
}

// Samples returns the raw samples of a selector's series with
// timestamps within [from, to]: an instant query of the range vector
// selector[to-from] at to.
func (p *Prometheus) Samples(ctx context.Context, selector string, from, to time.Time) ([]series, error) {
	rng := int(math.Ceil(to.Sub(from).Seconds()))
	if rng < 1 {
		rng = 1
	}
	q := fmt.Sprintf("%s[%ds]", selector, rng)
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string    `json:"metric"`
				Values [][2]json.RawMessage `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := p.get(ctx, "/api/v1/query", url.Values{"query": {q}, "time": {ts(to)}}, &r); err != nil {
		return nil, err
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("prometheus: query %q: %s", q, r.Error)
	}
	var out []series
	for _, res := range r.Data.Result {
		s := series{pod: res.Metric["pod"], container: res.Metric["container"], labels: res.Metric}
		for _, pair := range res.Values {
			pt, err := parsePoint(pair)
			if err != nil {
				return nil, fmt.Errorf("prometheus: query %q: %v", q, err)
			}
			if !pt.t.Before(from) && !pt.t.After(to) {
				s.points = append(s.points, pt)
			}
		}
		out = append(out, s)
	}
	return out, nil
}

func parsePoint(pair [2]json.RawMessage) (point, error) {
	var t float64
	var vs string
	if json.Unmarshal(pair[0], &t) != nil || json.Unmarshal(pair[1], &vs) != nil {
		return point{}, fmt.Errorf("a sample is not [time, \"value\"]")
	}
	v, err := strconv.ParseFloat(vs, 64)
	if err != nil {
		return point{}, fmt.Errorf("value %q: %v", vs, err)
	}
	return point{t: time.Unix(0, int64(t*1e9)), v: v}, nil
}

// get POSTs a query form and decodes Prometheus' JSON answer into out.
func (p *Prometheus) get(ctx context.Context, path string, form url.Values, out any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(p.URL, "/")+path, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	hc := p.Client
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("prometheus: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 32<<20))
	if err != nil {
		return fmt.Errorf("prometheus: %v", err)
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("prometheus: %s: not a query answer (%v)", resp.Status, err)
	}
	return nil
}

func ts(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixNano())/1e9, 'f', 3, 64)
}
