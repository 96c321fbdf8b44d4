package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ReadPath tells what a path holds and reads it: the one reader of report,
// compare (and merge's wording of a failed step).
func TestReadPath(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, body string) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const head = `"schema":4,"tool":"loadgen"`
	manifest := `{` + head + `,"kind":"sweep","steps":["s1","s2"]}`
	write("sweep/"+ManifestFile, manifest)
	step := write("sweep/steps/s1.json", `{`+head+`,"rung":"c1t1","run":{`+head+`,"config":{"target":"http://x/"}}}`)
	failed := write("sweep/steps/s2.json", `{`+head+`,"rung":"c1t1","failed":"refused\nagain"}`)
	write("lab/tcp/"+ManifestFile, manifest)
	write("lab/h2/"+ManifestFile, manifest)
	run := write("run.json", `{`+head+`,"config":{"target":"http://y/"}}`)
	bare := write("bare.json", `{`+head+`}`)
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		holds      Holds
		sweeps     []string // their directories, relative to dir
		target     string   // the run's
		err        string
	}{
		{"a sweep's directory", filepath.Join(dir, "sweep"), HoldsSweep, []string{"sweep"}, "", ""},
		{"its manifest", filepath.Join(dir, "sweep", ManifestFile), HoldsSweep, []string{"sweep"}, "", ""},
		{"a directory of sweeps, in name order", filepath.Join(dir, "lab"), HoldsSweep, []string{"lab/h2", "lab/tcp"}, "", ""},
		{"a step's run", step, HoldsStep, nil, "http://x/", ""},
		{"a failed step", failed, 0, nil, "", failed + ": the step failed (refused again): it has no run"},
		{"a run", run, HoldsRun, nil, "http://y/", ""},
		{"a bare header, as read", bare, HoldsRun, nil, "", ""},
		{"no sweep", filepath.Join(dir, "empty"), 0, nil, "", "not a sweep's results directory"},
		{"missing", filepath.Join(dir, "nope"), 0, nil, "", "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ReadPath(tc.path)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Holds != tc.holds {
				t.Errorf("Holds %d, want %d", p.Holds, tc.holds)
			}
			var got []string
			for _, s := range p.Sweeps {
				rel, _ := filepath.Rel(dir, s.Dir)
				got = append(got, filepath.ToSlash(rel))
				if len(s.Steps) != 2 && rel == "sweep" {
					t.Errorf("%s: %d steps, want 2", rel, len(s.Steps))
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.sweeps, " ") {
				t.Errorf("sweeps %q, want %q", got, tc.sweeps)
			}
			if (p.Run != nil) != (tc.sweeps == nil) || p.Run != nil && p.Run.Config.Target != tc.target {
				t.Errorf("run %+v, want target %q", p.Run, tc.target)
			}
		})
	}
}
