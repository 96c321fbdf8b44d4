// Package metrics serves a run's progress in the Prometheus text format
// while the load runs, so that Prometheus (and Grafana) can watch a sweep
// live: requests and errors by class, latency as a histogram, the achieved
// rate, the generator's CPU, and which step is running. It is fed the
// engine's Progress once a second; it never touches the hot path.
package metrics

import (
	"net/http"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"loadgen/loadgen"
	"loadgen/results"
	"loadgen/results/hist"
)

// Buckets are the latency histogram's upper bounds, in seconds: 50 µs to
// 30 s, about three per decade, as mesh latencies need.
var Buckets = []float64{50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 500e-3, 1, 2.5, 5, 10, 30}

// Exporter holds what Prometheus scrapes. Its methods are safe for
// concurrent use.
type Exporter struct {
	reg *prometheus.Registry

	mu       sync.Mutex
	step     string // the step running now ("" for a single run)
	path     string
	requests map[[2]string]float64 // by step, path: answered requests
	errors   map[[3]string]float64 // by step, path, class
	latency  map[[2]string]*latencyAcc
	rps      float64
	prev     loadgen.Progress // the last Progress of the current step

	info *prometheus.GaugeVec
}

type latencyAcc struct {
	buckets []uint64 // cumulative, per Buckets
	count   uint64
	sum     float64
}

// New makes an Exporter with its own registry (and Go's process and
// runtime collectors, so the generator's CPU and memory are there too).
// Every loadgen_ series carries the run's labels (PromLabels); Go's do
// not.
func New(labels results.Labels) *Exporter {
	x := &Exporter{
		reg:      prometheus.NewRegistry(),
		requests: map[[2]string]float64{},
		errors:   map[[3]string]float64{},
		latency:  map[[2]string]*latencyAcc{},
		info: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "loadgen_step_running", Help: "1 for the step running now.",
		}, []string{"step", "path"}),
	}
	prometheus.WrapRegistererWith(PromLabels(labels), x.reg).MustRegister(x, x.info)
	x.reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		collectors.NewGoCollector())
	return x
}

// own are the label names of the loadgen_ series themselves (le:
// histograms' buckets).
var own = []string{"step", "path", "class", "le"}

// PromLabels are a run's labels as Prometheus labels: each key by its
// name under Prometheus' rules (results.PromName: mesh.version is
// mesh_version), and one of the series' own names with "exported_"
// before it, as Prometheus renames a target's label that clashes with
// its own; the values as they are.
func PromLabels(l results.Labels) prometheus.Labels {
	out := make(prometheus.Labels, len(l))
	for k, v := range l {
		name := results.PromName(k)
		if slices.Contains(own, name) {
			name = "exported_" + name
		}
		out[name] = v
	}
	return out
}

// Handler serves /metrics.
func (x *Exporter) Handler() http.Handler {
	return promhttp.HandlerFor(x.reg, promhttp.HandlerOpts{})
}

// ErrorClasses are the classes of loadgen_errors_total: "any", the live
// sum, and those Finish sets when a step ends.
var ErrorClasses = []string{"any", "connect", "read", "write", "timeout", "status", "protocol"}

// Begin makes a single run's series (no step) exist from the start, at
// zero: a counter that appeared only with its first error would read, to
// rate() and increase(), as if there had been none before it.
func (x *Exporter) Begin() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.zero()
}

// Step says which step runs now (a sweep's step ID and path), its series
// at zero from now; a single run needs none (Begin).
func (x *Exporter) Step(step, path string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.info.Reset()
	x.step, x.path, x.prev, x.rps = step, path, loadgen.Progress{}, 0
	x.info.WithLabelValues(step, path).Set(1)
	x.zero()
}

// zero makes the running step's requests, errors of every class and
// latency series exist, at zero where they do not yet.
func (x *Exporter) zero() {
	k := [2]string{x.step, x.path}
	if _, ok := x.requests[k]; !ok {
		x.requests[k] = 0
	}
	for _, class := range ErrorClasses {
		if e := [3]string{x.step, x.path, class}; x.errors[e] == 0 {
			x.errors[e] = 0
		}
	}
	if x.latency[k] == nil {
		x.latency[k] = &latencyAcc{buckets: make([]uint64, len(Buckets))}
	}
}

// Progress adds one interval of the running step.
func (x *Exporter) Progress(p loadgen.Progress) {
	x.mu.Lock()
	defer x.mu.Unlock()
	k := [2]string{x.step, x.path}
	x.requests[k] += float64(p.Requests - x.prev.Requests)
	if d := p.Errors - x.prev.Errors; d > 0 {
		x.errors[[3]string{x.step, x.path, "any"}] += float64(d)
	}
	x.rps = p.RPS
	x.prev = p
	if p.Latency != nil && p.Latency.Count() > 0 {
		acc := x.latency[k]
		if acc == nil {
			acc = &latencyAcc{buckets: make([]uint64, len(Buckets))}
			x.latency[k] = acc
		}
		acc.add(p.Latency)
	}
}

// Finish records the step's final error counts by class (the live count
// knows only their sum) and its achieved rate over the whole step, rps,
// which loadgen_rate_achieved reads until the next step starts (or, after
// a run, through --prometheus-hold).
func (x *Exporter) Finish(byClass map[string]int64, rps float64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for class, n := range byClass {
		x.errors[[3]string{x.step, x.path, class}] = float64(n)
	}
	x.rps = rps
}

// ErrorsByClass names a run's error counts by the classes of
// loadgen_errors_total, for Finish.
func ErrorsByClass(e results.Errors) map[string]int64 {
	return map[string]int64{"connect": e.Connect, "read": e.Read, "write": e.Write,
		"timeout": e.Timeout, "status": e.Status, "protocol": e.Protocol}
}

// add folds an interval's histogram into the cumulative buckets.
func (a *latencyAcc) add(h *hist.Histogram) {
	for _, b := range h.Buckets() {
		v := b.To.Seconds()
		for i, ub := range Buckets {
			if v <= ub {
				a.buckets[i] += uint64(b.Count)
			}
		}
		a.count += uint64(b.Count)
		a.sum += v * float64(b.Count)
	}
}

var (
	descRequests = prometheus.NewDesc("loadgen_requests_total", "Answered requests (any status), as wrk counts them.", []string{"step", "path"}, nil)
	descErrors   = prometheus.NewDesc("loadgen_errors_total", "Failed requests and connection attempts; class any is the live sum, the others are set when a step ends.", []string{"step", "path", "class"}, nil)
	descLatency  = prometheus.NewDesc("loadgen_latency_seconds", "Latency of every request sent (failed ones when they failed), corrected for coordinated omission in open loop.", []string{"step", "path"}, nil)
	descRate     = prometheus.NewDesc("loadgen_rate_achieved", "Answered requests per second over the last interval of the running step; once a step ends, over the whole step.", nil, nil)
	descCPU      = prometheus.NewDesc("loadgen_generator_cpu_seconds_total", "CPU the generator used, user + system.", nil, nil)
)

// Describe and Collect make the Exporter a prometheus.Collector.
func (x *Exporter) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descRequests, descErrors, descLatency, descRate, descCPU} {
		ch <- d
	}
}

func (x *Exporter) Collect(ch chan<- prometheus.Metric) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for k, v := range x.requests {
		ch <- prometheus.MustNewConstMetric(descRequests, prometheus.CounterValue, v, k[0], k[1])
	}
	for k, v := range x.errors {
		ch <- prometheus.MustNewConstMetric(descErrors, prometheus.CounterValue, v, k[0], k[1], k[2])
	}
	for k, a := range x.latency {
		b := make(map[float64]uint64, len(Buckets))
		for i, ub := range Buckets {
			b[ub] = a.buckets[i]
		}
		ch <- prometheus.MustNewConstHistogram(descLatency, a.count, a.sum, b, k[0], k[1])
	}
	ch <- prometheus.MustNewConstMetric(descRate, prometheus.GaugeValue, x.rps)
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		ch <- prometheus.MustNewConstMetric(descCPU, prometheus.CounterValue, cpu)
	}
}

// Names lists the metrics the Exporter serves besides Go's own.
func Names() []string {
	return []string{"loadgen_requests_total", "loadgen_errors_total", "loadgen_latency_seconds",
		"loadgen_rate_achieved", "loadgen_generator_cpu_seconds_total", "loadgen_step_running"}
}
