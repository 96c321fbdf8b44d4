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

func serveExporter(t *testing.T, e *exporter) string {
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

// TestPrometheusReadsTheWatchedPods: a real Prometheus scrapes two
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
	time.Sleep(time.Until(start.Add(4 * time.Second)))
	win := Window{From: time.Now(), To: time.Now().Add(4 * time.Second), Measured: 4 * time.Second}
	ctx := context.Background()
	stop, err := p.Start(ctx, w, win)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(win.To.Add(1500 * time.Millisecond))) // the last scrape of the window lands
	c, err := stop()
	if err != nil {
		t.Fatal(err)
	}
	if c.Unmeasured != "" {
		t.Fatalf("unmeasured: %s", c.Unmeasured)
	}
	if c.CPUMean < 0.45 || c.CPUMean > 0.55 {
		t.Errorf("cpu %.3f cores, want the watched pod's 0.5 (the worker's 1.5, the sandbox's and the idle start left out): %+v", c.CPUMean, c)
	}
	if c.MemMean != 40<<20 || c.Processes != 1 || c.Covered < 2 || c.Covered > 4.01 {
		t.Errorf("cost %+v: want 40 MiB of one pod, covering 2 to 4 s of the window", c)
	}
	if d := c.CPUSeconds - c.CPUMean*4; d > 1e-9 || d < -1e-9 {
		t.Errorf("cpu seconds %v for %v cores over 4 s", c.CPUSeconds, c.CPUMean)
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
