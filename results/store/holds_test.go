package store

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"loadgen/results"
)

func TestRecognise(t *testing.T) {
	for _, tc := range []struct {
		name, path, body string
		want             Holds
	}{
		{"sweep manifest", "x/other.json", `{"kind":"sweep","schema":3}`, HoldsSweep},
		{"manifest by name", "x/manifest.json", `{"schema":3}`, HoldsSweep},
		{"manifest by name, unparsable", "x/manifest.json", `{`, HoldsSweep},
		{"step", "x/steps/c1.json", `{"rung":"c1","run":{}}`, HoldsStep},
		{"failed step", "x/steps/c1.json", `{"rung":"c1","failed":"refused"}`, HoldsStep},
		{"empty rung is a step", "s.json", `{"rung":""}`, HoldsStep},
		{"run", "run.json", `{"schema":3,"config":{"target":"http://127.0.0.1/"}}`, HoldsRun},
		{"another kind", "study.json", `{"kind":"study"}`, HoldsRun},
		{"not json", "run.json", `nonsense`, HoldsRun},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Recognise(tc.path, []byte(tc.body)); got != tc.want {
				t.Errorf("Recognise = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestSweepDirs(t *testing.T) {
	mk := func(t *testing.T, files ...string) string {
		dir := t.TempDir()
		for _, f := range files {
			p := filepath.Join(dir, f)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	for _, tc := range []struct {
		name  string
		files []string
		want  []string
	}{
		{"sweeps in name order", []string{"tcp/manifest.json", "h2/manifest.json", "http/manifest.json"}, []string{"h2", "http", "tcp"}},
		{"only those with a manifest", []string{"h2/manifest.json", "logs/x.json", "manifest.json.bak"}, []string{"h2"}},
		{"a file named like a sweep", []string{"h2/manifest.json", "h3"}, []string{"h2"}},
		{"itself a sweep", []string{"manifest.json", "h2/manifest.json"}, nil},
		{"nothing", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := SweepDirs(mk(t, tc.files...))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("SweepDirs = %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := SweepDirs(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Error("SweepDirs of a missing directory: no error")
	}
}

func TestEmpty(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  results.Run
		want bool
	}{
		{"nothing", results.Run{Schema: results.SchemaVersion}, true},
		{"target only", results.Run{Config: results.Config{Target: "http://127.0.0.1/"}}, false},
		{"protocol only", results.Run{Config: results.Config{Protocol: "tcp"}}, false},
		{"requests only", results.Run{Summary: results.Summary{Requests: 1}}, false},
		{"histogram only", results.Run{Histograms: results.Encoded{Latency: "HISTFAA"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Empty(&tc.run); got != tc.want {
				t.Errorf("Empty = %v, want %v", got, tc.want)
			}
		})
	}
}
