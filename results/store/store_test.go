package store

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"loadgen/results"
	"loadgen/results/hist"
)

func sampleRun(t *testing.T) *results.Run {
	h := hist.New()
	for i := 1; i <= 100; i++ {
		h.Record(time.Duration(i) * time.Millisecond)
	}
	enc, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	lat := results.Latency{Count: 100, Min: results.Duration(time.Millisecond), Mean: results.Duration(50500 * time.Microsecond),
		P50: results.Duration(50 * time.Millisecond), P99: results.Duration(99 * time.Millisecond), WithinStdDev: 57.5}
	return &results.Run{
		Schema: results.SchemaVersion, Tool: "loadgen",
		Config: results.Config{Target: "http://127.0.0.1:8080/get", Protocol: "http1", Method: "GET", Connections: 50, Threads: 2,
			Duration: results.Duration(10 * time.Second), Timeout: results.Duration(2 * time.Second), Rate: 2000, Headers: []string{"X-A: b"}},
		Env:   results.Env{Hostname: "h", Kernel: "6.1", NumCPU: 2, GOMAXPROCS: 2, GoVersion: "go1.26"},
		Start: time.Date(2026, 11, 30, 1, 2, 3, 456789, time.UTC), End: time.Date(2026, 11, 30, 1, 2, 13, 0, time.UTC),
		Summary: results.Summary{Requests: 100, Duration: results.Duration(10 * time.Second), RPS: 10, BytesRead: 12345,
			Latency: lat, Uncorrected: &lat, Status: map[int]int64{200: 98, 503: 2}, Errors: results.Errors{Status: 2, Timeout: 1},
			Non2xx3xx: 2, Connections: results.Connections{Established: 50}, ThreadRPS: results.Spread{Samples: 3, Mean: 5},
			Pacing: &results.Pacing{Asked: 2000, Achieved: 1999.5, Sent: 100, Late: 1, MaxLag: results.Duration(3 * time.Millisecond)}},
		Generator:  results.Cost{CPUSeconds: 1.5, UserSeconds: 0.5, SysSeconds: 1, PeakRSS: 1 << 24, CPUs: 2, Utilization: 0.075},
		Histograms: results.Encoded{Latency: enc, Uncorrected: enc},
		Notes:      []string{"a note"},
	}
}

func TestRunRoundTrip(t *testing.T) {
	run := sampleRun(t)
	path := filepath.Join(t.TempDir(), "run.json")
	if err := WriteRun(path, run); err != nil {
		t.Fatal(err)
	}
	got, err := ReadRun(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, run) {
		t.Errorf("round trip differs:\n got %+v\nwant %+v", got, run)
	}
	h, err := hist.Decode(got.Histograms.Latency)
	if err != nil || h.Count() != 100 {
		t.Errorf("histogram after round trip: %v, %v", h, err)
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only run.json", len(entries))
	}
}

func TestReadRunRejects(t *testing.T) {
	dir := t.TempDir()
	good, _ := os.ReadFile(func() string {
		p := filepath.Join(dir, "good.json")
		if err := WriteRun(p, sampleRun(t)); err != nil {
			t.Fatal(err)
		}
		return p
	}())
	for name, tc := range map[string]struct {
		data string
		msg  string
	}{
		"truncated":        {string(good[:len(good)/2]), "not a loadgen result"},
		"newer schema":     {strings.Replace(string(good), fmt.Sprintf(`"schema": %d`, results.SchemaVersion), `"schema": 99`, 1), "newer than this loadgen"},
		"not ours":         {`{"foo": 1}`, "not a loadgen result"},
		"bad duration":     {strings.Replace(string(good), `"duration_s": 10`, `"duration_s": "10s"`, 1), "invalid result"},
		"bad old duration": {`{"schema": 2, "tool": "loadgen", "config": {"duration": "ten"}}`, "invalid result (schema 2): config.duration"},
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name+".json")
			os.WriteFile(p, []byte(tc.data), 0o644)
			_, err := ReadRun(p)
			if err == nil || !strings.Contains(err.Error(), tc.msg) || !strings.Contains(err.Error(), p) {
				t.Errorf("error %v, want one naming the file and saying %q", err, tc.msg)
			}
		})
	}
}

func TestWriteRunFailsCleanly(t *testing.T) {
	if err := WriteRun("/nonexistent-dir/run.json", sampleRun(t)); err == nil {
		t.Error("want an error writing into a missing directory")
	}
}

func FuzzDecodeRun(f *testing.F) {
	f.Add([]byte(`{"schema":1,"tool":"loadgen","summary":{"latency":{"p50":"1ms"}}}`))
	f.Add([]byte(`{"schema":2,"tool":"loadgen"}`))
	f.Add([]byte(`{"schema":3,"tool":"loadgen","summary":{"duration_s":1.5,"latency":{"p50_us":92.159}}}`))
	f.Add([]byte(`{"schema":2,"tool":"loadgen","rung":"c1t1","run":{"schema":2,"tool":"loadgen","config":{"timeout":"2s"}},"watched":[{"cpu_seconds":1}]}`))
	f.Add([]byte(`{"schema":1,"tool":"loadgen","config":{"duration":12}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		run, err := DecodeRun(b)
		if err != nil {
			return
		}
		if run == nil {
			t.Fatal("nil run without error")
		}
		// Whatever was read, of any schema, is written in this one and
		// reads back the same: decode∘encode is the identity on a decoded
		// run.
		enc, err := json.Marshal(run)
		if err != nil {
			t.Fatalf("a decoded run does not encode: %v", err)
		}
		again, err := DecodeRun(enc)
		if err != nil {
			t.Fatalf("its own encoding does not decode: %v\n%s", err, enc)
		}
		if enc2, _ := json.Marshal(again); !bytes.Equal(enc, enc2) {
			t.Fatalf("round trip changed the run:\n%s\n%s", enc, enc2)
		}
	})
}
