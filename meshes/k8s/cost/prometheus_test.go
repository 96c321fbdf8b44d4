package cost

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"loadgen/internal/promtest"
)

// exporter serves cAdvisor-shaped series whose counters grow at known
// rates, for a real Prometheus to scrape.
type exporter struct {
	mu    sync.Mutex
	start time.Time
	lines func(elapsed float64) []string
}

func (e *exporter) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, l := range e.lines(time.Since(e.start).Seconds()) {
		fmt.Fprintln(w, l)
	}
}

func serveExporter(t *testing.T, e http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: e}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

// TestPrometheusReadsTheWatchedPods checks that a real Prometheus scrapes two
// exporters (as a Prometheus that scrapes both the kubelet's cadvisor and
// resource endpoints has each series twice), one watched pod using 0.5
// cores and 40 MiB and an unwatched worker using 1.5 cores in the same
// namespace. The figure is the watched pod's, from the raw samples within
// the window: the worker is not in it, and neither is the pod's earlier
// idle time.
func TestPrometheusReadsTheWatchedPods(t *testing.T) {
	series := func(el float64) []string {
		target := 0.5 * max(0, el-3) // idle for 3 s, then 0.5 cores
		return []string{
			fmt.Sprintf(`container_cpu_usage_seconds_total{namespace="bench",pod="loadgen-target-abc",container="",image=""} %f`, target),
			fmt.Sprintf(`container_cpu_usage_seconds_total{namespace="bench",pod="lg-run-0-0-xyz",container="",image=""} %f`, 1.5*el),
			// The sandbox's series: the pause image, not the pod's cgroup.
			fmt.Sprintf(`container_cpu_usage_seconds_total{namespace="bench",pod="loadgen-target-abc",container="",image="pause"} %f`, 10*el),
			`container_memory_working_set_bytes{namespace="bench",pod="loadgen-target-abc",container="",image=""} 41943040`,
			`container_memory_working_set_bytes{namespace="bench",pod="lg-run-0-0-xyz",container="",image=""} 104857600`,
		}
	}
	start := time.Now()
	a := serveExporter(t, &exporter{start: start, lines: series})
	b := serveExporter(t, &exporter{start: start, lines: series})
	url := promtest.Start(t, a, b)
	p := &Prometheus{URL: url, Pods: func(_ context.Context, w Watch) ([]Pod, error) {
		if w.Namespace != "bench" || w.Selector != "app.kubernetes.io/name=loadgen-target" {
			return nil, fmt.Errorf("pods of %s %s", w.Namespace, w.Selector)
		}
		return []Pod{{Name: "loadgen-target-abc"}}, nil
	}}
	w := Watch{Name: "target", Role: "target", Namespace: "bench", Selector: "app.kubernetes.io/name=loadgen-target"}
	for _, ok := promtest.Query(t, url, "up"); !ok; _, ok = promtest.Query(t, url, "up") {
		time.Sleep(100 * time.Millisecond) // until Prometheus's first scrape (after its discovery's)
	}
	win := Window{From: time.Now(), To: time.Now().Add(5 * time.Second), Measured: 5 * time.Second}
	ctx := context.Background()
	stop, err := p.Start(ctx, w, win)
	if err != nil {
		t.Fatal(err)
	}
	c, err := stop() // once Prometheus has scraped past the window
	if err != nil {
		t.Fatal(err)
	}
	if c.Unmeasured != "" {
		t.Fatalf("unmeasured: %s", c.Unmeasured)
	}
	if c.CPUMean < 0.45 || c.CPUMean > 0.55 {
		t.Errorf("cpu %.3f cores, want the watched pod's 0.5 (the worker's 1.5, the sandbox's and the idle start left out): %+v", c.CPUMean, c)
	}
	if c.MemMean != 40<<20 || c.Processes != 1 || c.Covered < 2 || c.Covered > 5.01 {
		t.Errorf("cost %+v: want 40 MiB of one pod, covering 2 to 5 s of the window", c)
	}
	// From the fixture, not from CPUMean: the watched pod's 0.5 cores over
	// the 5 s window.
	if c.CPUSeconds < 0.45*5 || c.CPUSeconds > 0.55*5 {
		t.Errorf("cpu seconds %v, want the watched pod's 0.5 cores over 5 s", c.CPUSeconds)
	}
	// A pod of the watch with no sample in the window (a new one) makes the
	// figure unmeasurable, by name; a metric Prometheus does not have at all
	// says it is not scraped.
	p2 := *p
	p2.Pods = func(context.Context, Watch) ([]Pod, error) {
		return []Pod{{Name: "loadgen-target-abc"}, {Name: "loadgen-target-new"}}, nil
	}
	if stop, err := p2.Start(ctx, w, win); err != nil {
		t.Fatal(err)
	} else if c, err := stop(); err != nil || !strings.Contains(c.Unmeasured, "no sample of pod loadgen-target-new") {
		t.Errorf("a pod without samples: %+v %v", c, err)
	}
	p2.CPU = `nosuch_cpu_seconds_total{namespace="{namespace}",pod=~"{pods}"}`
	p2.MaxWait = time.Second
	if stop, err := p2.Start(ctx, w, win); err != nil {
		t.Fatal(err)
	} else if c, err := stop(); err != nil || !strings.Contains(c.Unmeasured, "is the kubelet's /metrics/cadvisor of its node scraped?") {
		t.Errorf("a metric not scraped: %+v %v", c, err)
	}

	// A window too short for two samples is not measurable, and says so.
	short := Window{From: time.Now().Add(-300 * time.Millisecond), To: time.Now(), Measured: 300 * time.Millisecond}
	stop, err = p.Start(ctx, w, short)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := stop(); err != nil || !strings.Contains(c.Unmeasured, "not measurable at this step length") || c.CPUMean != 0 {
		t.Errorf("a 300 ms window: %+v %v", c, err)
	}
}

func TestPrometheusSelectors(t *testing.T) {
	p := &Prometheus{}
	w := Watch{Namespace: "bench", Containers: []string{"istio-proxy"}}
	if q := p.selector(p.CPU, DefaultPromCPU, w, []Pod{{Name: "a-1"}, {Name: "b.2"}}); q != `container_cpu_usage_seconds_total{namespace="bench",pod=~"a-1|b\\.2",container=~"istio-proxy"}` {
		t.Errorf("cpu selector %s", q)
	}
	w.Containers = []string{"http-httpbin", "grpc-echo"}
	if q := p.selector(p.CPU, DefaultPromCPU, w, []Pod{{Name: "a"}}); q != `container_cpu_usage_seconds_total{namespace="bench",pod=~"a",container=~"http-httpbin|grpc-echo"}` {
		t.Errorf("containers' cpu selector %s", q)
	}
	w.Containers = nil
	if q := p.selector(p.Memory, DefaultPromMemory, w, []Pod{{Name: "a"}}); q != `container_memory_working_set_bytes{namespace="bench",pod=~"a",container="",image=""}` {
		t.Errorf("whole-pod memory selector %s", q)
	}
	for _, bad := range []string{`sum(rate(x[1m]))`, `container_cpu_usage_seconds_total{namespace="{namespace}"}`} {
		if err := CheckSelector("--prom-cpu", bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	if err := CheckSelector("--prom-cpu", `x{pod=~"{pods}"}`); err != nil {
		t.Error(err)
	}
}

func TestCounterIncrease(t *testing.T) {
	at := func(s float64) time.Time { return time.Unix(1000, 0).Add(time.Duration(s * float64(time.Second))) }
	s := series{points: []point{{at(0), 10}, {at(2), 12}, {at(4), 1}, {at(6), 3}}} // restarted between 2 and 4
	inc, span, ok := s.increase()
	if !ok || inc != 2+1+2 || span != 6*time.Second {
		t.Errorf("increase %v over %v (%v), want 5 over 6s", inc, span, ok)
	}
	if _, _, ok := (series{points: []point{{at(0), 1}}}).increase(); ok {
		t.Error("one sample has no increase")
	}
}

// housekeeper is cAdvisor as the kubelet exports it: it measures a
// container's CPU counter every housekeeping interval and serves the last
// measurement, with the measurement's own timestamp, until the next one.
// The container uses 2 cores until change, 0.5 after.
type housekeeper struct {
	t0     time.Time
	every  time.Duration
	mu     sync.Mutex
	change time.Time // zero: not yet
}

func (h *housekeeper) counter(at time.Time) float64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.change.IsZero() {
		return 2 * at.Sub(h.t0).Seconds()
	}
	if at.Before(h.change) {
		return 2 * at.Sub(h.t0).Seconds()
	}
	return 2*h.change.Sub(h.t0).Seconds() + 0.5*at.Sub(h.change).Seconds()
}

// measured is the instant of the k-th measurement.
func (h *housekeeper) measured(k int) time.Time { return h.t0.Add(time.Duration(k) * h.every) }

func (h *housekeeper) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	k := int(time.Since(h.t0) / h.every)
	m := h.measured(k)
	fmt.Fprintf(w, "container_cpu_usage_seconds_total{namespace=\"bench\",pod=\"loadgen-target-abc\",container=\"http-httpbin\"} %f %d\n", h.counter(m), m.UnixMilli())
}

// TestPrometheusScrapeTimes checks that where Prometheus times samples by
// their scrapes (honor_timestamps: false, kube-prometheus' kubelet
// ServiceMonitor), the first sample within the step is cAdvisor's last
// measurement before it, made while the step before loaded the container
// (2 cores against the step's 0.5). Only measurements whose previous
// sample lies within the step count; where Prometheus keeps cAdvisor's
// timestamps, the same rule holds.
func TestPrometheusScrapeTimes(t *testing.T) {
	h := &housekeeper{t0: time.Now().Truncate(time.Second), every: 3 * time.Second}
	addr := serveExporter(t, h)
	urls := map[string]string{
		"scrape times":     promtest.StartWith(t, promtest.Options{IgnoreTimestamps: true}, addr),
		"cAdvisor's times": promtest.StartWith(t, promtest.Options{}, addr),
	}
	for _, u := range urls {
		for {
			if _, ok := promtest.Query(t, u, "up"); ok {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	// The step starts 2 s after a measurement, half a second after its
	// load began, and lasts 12 s: four measurements within it.
	j := int(time.Since(h.t0)/h.every) + 2
	h.mu.Lock()
	h.change = h.measured(j).Add(1500 * time.Millisecond)
	h.mu.Unlock()
	win := Window{From: h.measured(j).Add(2 * time.Second), To: h.measured(j).Add(14 * time.Second), Measured: 12 * time.Second}
	w := Watch{Name: "target", Role: "target", Namespace: "bench", Selector: "app.kubernetes.io/name=loadgen-target", Containers: []string{"http-httpbin"}}
	pods := func(context.Context, Watch) ([]Pod, error) {
		return []Pod{{Name: "loadgen-target-abc", Containers: []string{"http-httpbin"}}}, nil
	}
	for name, u := range urls {
		t.Run(name, func(t *testing.T) {
			p := &Prometheus{URL: u, Pods: pods}
			stop, err := p.Start(context.Background(), w, win)
			if err != nil {
				t.Fatal(err)
			}
			c, err := stop() // once Prometheus has scraped past the window
			if err != nil || c.Unmeasured != "" {
				t.Fatalf("%+v %v", c, err)
			}
			if c.CPUMean < 0.425 || c.CPUMean > 0.575 {
				t.Errorf("cpu %.3f cores, want the step's 0.5 (the step before used 2): %+v", c.CPUMean, c)
			}
			if c.CoveredFrom.Before(win.From) || c.CoveredTo.After(win.To) {
				t.Errorf("the figure covers %v–%v, outside the window %v–%v", c.CoveredFrom, c.CoveredTo, win.From, win.To)
			}
		})
	}
}

// TestPrometheusEndedSeries checks that a series that ends before the window
// does (a worker's sidecar, stopped with its load) is not waited for past the
// window's end until MaxWait: two of its intervals without a sample say it
// ended.
func TestPrometheusEndedSeries(t *testing.T) {
	var ended sync.Mutex
	gone := false
	e := &exporter{start: time.Now(), lines: func(el float64) []string {
		ended.Lock()
		defer ended.Unlock()
		if gone {
			return nil
		}
		return []string{fmt.Sprintf(`container_cpu_usage_seconds_total{namespace="bench",pod="lg-r1-0-x",container="istio-proxy"} %f`, 0.2*el)}
	}}
	url := promtest.Start(t, serveExporter(t, e))
	from := time.Time{}
	for {
		if v, ok := promtest.Query(t, url, `count_over_time(container_cpu_usage_seconds_total[1m])`); ok && v >= 3 {
			break
		}
		if _, ok := promtest.Query(t, url, "up"); ok && from.IsZero() {
			from = time.Now()
		}
		time.Sleep(100 * time.Millisecond)
	}
	ended.Lock()
	gone = true
	ended.Unlock()
	win := Window{From: from, To: time.Now().Add(time.Second), Measured: time.Since(from)}
	p := &Prometheus{URL: url, MaxWait: time.Minute, Pods: func(context.Context, Watch) ([]Pod, error) {
		return []Pod{{Name: "lg-r1-0-x", Containers: []string{"istio-proxy"}}}, nil
	}}
	stop, err := p.Start(context.Background(), Watch{Name: "client-proxy", Namespace: "bench", Selector: "x", Containers: []string{"istio-proxy"}}, win)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	if _, err := stop(); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(began); waited > 30*time.Second {
		t.Errorf("waited %v for a series that had ended (MaxWait %v)", waited.Round(time.Second), p.MaxWait)
	}
}

// An idle container's counter hardly moves, so its series holds too few
// new measurements in a step: it is idle (its small rate), not a reason to
// drop the figure of the pod it is part of. A busy one, or a series that
// does not enclose the window, is not taken for idle.
func TestSeriesIdle(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	at := func(sec int, v float64) point { return point{t: t0.Add(time.Duration(sec) * time.Second), v: v} }
	from, to := t0.Add(30*time.Second), t0.Add(90*time.Second)
	for _, tc := range []struct {
		name string
		pts  []point
		why  string // "" idle; else what the reason says
	}{
		{"unchanged", []point{at(0, 5), at(30, 5), at(60, 5), at(90, 5), at(120, 5)}, ""},
		{"once, by a little", []point{at(20, 5), at(50, 5), at(80, 5.2), at(110, 5.2)}, ""},
		{"busy, one measurement", []point{at(20, 5), at(50, 5), at(80, 35), at(110, 35)}, "rose by 0.333 cores"},
		{"ends inside", []point{at(0, 5), at(30, 5), at(60, 5)}, "30s before the load ended"},
		{"starts inside", []point{at(40, 5), at(70, 5), at(100, 5)}, "10s after the load began"},
		{"restarted", []point{at(20, 5), at(100, 1)}, "fell"},
		{"none", nil, "no sample"},
	} {
		cores, why := series{points: tc.pts}.idle(from, to)
		if (why == "") != (tc.why == "") || !strings.Contains(why, tc.why) || (why == "" && cores >= IdleCores) {
			t.Errorf("%s: idle %.4f cores, reason %q; want %q", tc.name, cores, why, tc.why)
		}
	}
}
