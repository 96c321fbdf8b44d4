package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"loadgen/loadgen"
	"loadgen/results"
)

// scrape returns what /metrics serves.
func scrape(t *testing.T, x *Exporter) string {
	t.Helper()
	rec := httptest.NewRecorder()
	x.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(rec.Body)
	return string(b)
}

// Every counter of a run exists from the start, at zero: errors of each
// class before the first error, requests before the first answer.
func TestSeriesAtZeroFromTheStart(t *testing.T) {
	x := New(nil)
	x.Begin()
	text := scrape(t, x)
	for _, class := range ErrorClasses {
		if want := `loadgen_errors_total{class="` + class + `",path="",step=""} 0`; !strings.Contains(text, want) {
			t.Errorf("no %s before any error:\n%s", want, text)
		}
	}
	for _, want := range []string{`loadgen_requests_total{path="",step=""} 0`, `loadgen_latency_seconds_count{path="",step=""} 0`} {
		if !strings.Contains(text, want) {
			t.Errorf("no %s before any request", want)
		}
	}
	// A sweep's step: its own series at zero as it starts.
	x.Step("nginx_c1t1_100B_closed_r1", "nginx")
	if want := `loadgen_errors_total{class="timeout",path="nginx",step="nginx_c1t1_100B_closed_r1"} 0`; !strings.Contains(scrape(t, x), want) {
		t.Errorf("no %s as the step starts", want)
	}
}

// After a run (through --prometheus-hold) the achieved rate reads the
// run's own, not 0; a new step starts again from 0.
func TestRateAchievedKeptAfterTheRun(t *testing.T) {
	x := New(nil)
	x.Begin()
	x.Progress(loadgen.Progress{Elapsed: time.Second, Requests: 1000, RPS: 1000})
	x.Finish(map[string]int64{"timeout": 2}, 987.5)
	text := scrape(t, x)
	if !strings.Contains(text, "loadgen_rate_achieved 987.5\n") {
		t.Errorf("after the run, loadgen_rate_achieved is not the run's 987.5:\n%s", text)
	}
	if !strings.Contains(text, `loadgen_errors_total{class="timeout",path="",step=""} 2`) {
		t.Errorf("the run's timeouts are not counted:\n%s", text)
	}
	x.Step("s2", "p")
	if !strings.Contains(scrape(t, x), "loadgen_rate_achieved 0\n") {
		t.Error("a new step does not start from 0")
	}
}

// Every loadgen series carries the run's labels, named by Prometheus'
// rules, one that clashes with a series' own label renamed as Prometheus
// does, the values as given; Go's own series do not.
func TestSeriesCarryTheRunsLabels(t *testing.T) {
	x := New(results.Labels{"mesh.version": "1.24 rc", "path": "direct", "9x": "y"})
	x.Begin()
	x.Step("s1", "nginx")
	text := scrape(t, x)
	p := expfmt.NewTextParser(model.LegacyValidation) // the names of Prometheus' classic rules
	families, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("not the text format: %v\n%s", err, text)
	}
	want := map[string]string{"mesh_version": "1.24 rc", "exported_path": "direct", "_9x": "y"}
	for _, name := range Names() {
		f := families[name]
		if f == nil || len(f.Metric) == 0 {
			t.Errorf("no %s", name)
			continue
		}
		for _, m := range f.Metric {
			got := map[string]string{}
			for _, l := range m.Label {
				got[l.GetName()] = l.GetValue()
			}
			for k, v := range want {
				if got[k] != v {
					t.Errorf("%s %v: %s=%q, want %q", name, got, k, got[k], v)
				}
			}
		}
	}
	for _, m := range families["go_goroutines"].GetMetric() {
		if len(m.Label) != 0 {
			t.Errorf("go_goroutines carries labels: %v", m.Label)
		}
	}
}
