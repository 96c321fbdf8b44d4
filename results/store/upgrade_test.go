package store

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"loadgen/results"
	"loadgen/results/hist"
)

// Files of schema 2, written by loadgen run --json before schema 3
// (testdata/schema2), read with every time as it was written.
func TestReadSchema2(t *testing.T) {
	ms := func(f float64) results.Duration { return results.Duration(f * float64(time.Millisecond)) }
	for _, tc := range []struct {
		file  string
		check func(*results.Run) []any // got, want pairs
	}{
		{"run-open.json", func(r *results.Run) []any {
			s := r.Summary
			return []any{r.Config.Duration, results.Duration(time.Second), r.Config.Warmup, ms(200), r.Config.Timeout, results.Duration(2 * time.Second),
				s.Duration, results.Duration(999798595), s.Latency.P50, results.Duration(65535), s.Latency.P99, results.Duration(401919),
				s.Latency.Max, results.Duration(3426303), s.Pacing.MaxLag, results.Duration(3362195), s.LastOK, results.Duration(999620320),
				s.Uncorrected != nil && s.Connect != nil, true, r.Generator.CPUSeconds, 0.072559, r.Machine.Saturated, true}
		}},
		{"run-stopped.json", func(r *results.Run) []any {
			s := r.Summary
			return []any{r.Config.Timeout, ms(100), s.Duration, results.Duration(1999760726), s.LastOK, results.Duration(1281227421),
				s.Outage, results.Duration(699686335), s.OutageAt, results.Duration(1300060420), s.Failed.P99, results.Duration(17268735),
				s.Succeeded.P99, results.Duration(128516095), s.Pacing.MaxLag, results.Duration(139138751), r.Generator.CPUSeconds, 0.094356}
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join("testdata", "schema2", tc.file)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), `"schema": 2`) || !strings.Contains(string(b), `"p99": "`) {
				t.Fatalf("%s is no longer a schema-2 file: keep it as written", path)
			}
			r, err := ReadRun(path)
			if err != nil {
				t.Fatal(err)
			}
			if r.Schema != results.SchemaVersion {
				t.Errorf("schema %d, want %d: schema 2 means what 3 does", r.Schema, results.SchemaVersion)
			}
			c := tc.check(r)
			for i := 0; i < len(c); i += 2 {
				if c[i] != c[i+1] {
					t.Errorf("figure %d: %v, want %v", i/2, c[i], c[i+1])
				}
			}
			// Written again, in the current format, it reads the same.
			again := filepath.Join(t.TempDir(), "again.json")
			if err := WriteRun(again, r); err != nil {
				t.Fatal(err)
			}
			r2, err := ReadRun(again)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(r, r2) {
				t.Errorf("differs once written again:\n got %+v\nwant %+v", r2, r)
			}
		})
	}
}

// A sweep of schema 1 (results/report's fixture) reads: its manifest, its
// steps and their runs; schema 1 stays 1 (its latency counted successful
// requests only).
func TestReadSchema1Sweep(t *testing.T) {
	m, steps, err := ReadSweep(filepath.Join("..", "report", "testdata", "sweep"))
	if err != nil {
		t.Fatal(err)
	}
	if m.Schema != 1 || len(steps) != 16 {
		t.Fatalf("schema %d, %d steps", m.Schema, len(steps))
	}
	for _, st := range steps {
		if st.Run == nil || st.Run.Schema != 1 || st.Run.Config.Duration.D() != 3*time.Second || st.Run.Config.Warmup.D() != 500*time.Millisecond ||
			st.Run.Summary.Latency.P99 <= 0 || st.Run.Summary.Duration.D() < 3*time.Second || st.Run.Generator.CPUSeconds <= 0 {
			t.Errorf("%s: %+v", st.ID, st.Run)
		}
	}
	for _, st := range steps {
		if st.ID == "nginx_c4t4_100B_closed_r1" && (st.Run.Summary.Latency.P99 != 982527 || st.Run.Summary.Connect.Max != 2789375 || st.Watched[0].CPUSeconds <= 0) {
			t.Errorf("%s: p99 %v, connect max %v, watched %+v", st.ID, st.Run.Summary.Latency.P99, st.Run.Summary.Connect.Max, st.Watched)
		}
	}
}

// upgrade renames only the keys of older schemas: a document already in
// the current format passes unchanged (a merge of schema-1 runs keeps
// schema 1 in the current format), and a step's run is upgraded by its own
// schema.
func TestUpgradeKeys(t *testing.T) {
	run := &results.Run{Schema: 1, Tool: "loadgen", Config: results.Config{Duration: results.Duration(time.Second)},
		Summary: results.Summary{Latency: results.Latency{P99: 5000}}, Generator: results.Cost{CPUSeconds: 2}}
	b, _ := json.Marshal(run)
	got, err := DecodeRun(b)
	if err != nil || !reflect.DeepEqual(got, run) {
		t.Errorf("a current-format run of schema 1: %+v, %v", got, err)
	}
	old := `{"schema":2,"tool":"loadgen","index":1,"id":"a","rung":"c1t1","watched":[{"name":"nginx","cpu_seconds":1.5,"covered_seconds":30}],
		"run":{"schema":2,"tool":"loadgen","config":{"duration":"3s","timeout":2000000000},"summary":{"duration":"3.5s","latency":{"p99":"1.5ms"},
		"failed":{"p50":"2s"},"pacing":{"max_lag":"4µs"}},"generator":{"cpu_seconds":0.5,"user_seconds":0.25,"sys_seconds":0.25}}}`
	var st results.Step
	if err := decode([]byte(old), &st); err != nil {
		t.Fatal(err)
	}
	r := st.Run
	if st.Schema != results.SchemaVersion || st.Watched[0].CPUSeconds != 1.5 || st.Watched[0].Covered != 30 || r.Schema != results.SchemaVersion ||
		r.Config.Duration.D() != 3*time.Second || r.Config.Timeout.D() != 2*time.Second || r.Summary.Duration.D() != 3500*time.Millisecond ||
		r.Summary.Latency.P99.D() != 1500*time.Microsecond || r.Summary.Failed.P50.D() != 2*time.Second || r.Summary.Pacing.MaxLag.D() != 4*time.Microsecond ||
		r.Generator != (results.Cost{CPUSeconds: 0.5, UserSeconds: 0.25, SysSeconds: 0.25}) {
		t.Errorf("upgraded step: %+v\nrun %+v", st, r)
	}
}

// A run of schema 3 has no p95: read, it gains each latency's from its
// histogram, and its schema becomes 4; one without a histogram gains none.
func TestReadSchema3P95(t *testing.T) {
	h := hist.New()
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	enc, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	run := &results.Run{Schema: results.SchemaVersion, Tool: "loadgen", Summary: results.Summary{Latency: results.Reduce(h)},
		Histograms: results.Encoded{Latency: enc}}
	run.Summary.Connect = &results.Latency{Count: 3, P99: 5000}
	b, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(strings.ReplaceAll(string(b), `"p95_us":0,`, ""), `"schema":4`, `"schema":3`, 1)
	old = strings.Replace(old, `"p95_us":`+results.FormatMicros(run.Summary.Latency.P95)+`,`, "", 1)
	if strings.Contains(old, "p95_us") || !strings.Contains(old, `"schema":3`) {
		t.Fatalf("not a schema-3 file: %s", old)
	}
	got, err := DecodeRun([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	if want := results.Duration(h.Quantile(0.95)); got.Schema != 4 || got.Summary.Latency.P95 != want || want < 940*results.Duration(time.Microsecond) {
		t.Errorf("schema %d, p95 %v, want 4 and %v", got.Schema, got.Summary.Latency.P95, want)
	}
	if got.Summary.Connect.P95 != 0 {
		t.Errorf("connect had no histogram, yet p95 %v", got.Summary.Connect.P95)
	}
}
