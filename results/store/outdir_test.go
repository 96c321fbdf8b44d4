package store

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A command's results directory: the one given, else a default named for
// the command and the time; a resume must name the one it continues; and
// either is checked before anything starts, the error naming -o.
func TestOutDir(t *testing.T) {
	now := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	tmp := t.TempDir()
	file := filepath.Join(tmp, "a-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir(tmp) // the default directory is relative: checked here
	for _, tc := range []struct {
		name, dir, prefix, what string
		resume                  bool
		want, err               string
	}{
		{name: "default", prefix: "sweep", what: "sweep", want: "sweep-20260102-150405"},
		{name: "default of a study", prefix: "study-nginx-sizing", what: "study", want: "study-nginx-sizing-20260102-150405"},
		{name: "given", dir: "out/x", prefix: "sweep", want: "out/x"},
		{name: "given on resume", dir: "out/x", prefix: "size", resume: true, what: "run", want: "out/x"},
		{name: "resume without -o", prefix: "sweep", resume: true, what: "sweep", err: "--resume needs -o: the directory of the sweep to continue"},
		{name: "resume of a study without -o", prefix: "study-x", resume: true, what: "study", err: "--resume needs -o: the directory of the study to continue"},
		{name: "a file", dir: file, prefix: "lab", what: "run", err: "-o " + file + ": it is a file, not a directory: give a directory for the results (created if missing)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := OutDir(tc.dir, tc.prefix, tc.resume, tc.what, now)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("OutDir = %q, %v; want the error %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("OutDir = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 1 {
		t.Errorf("OutDir left %d entries behind, want only the test's file", len(entries)-1)
	}
}

func TestOutHelp(t *testing.T) {
	if got, want := OutHelp("k8s-paths"), "results directory (default k8s-paths-YYYYMMDD-HHMMSS)"; got != want {
		t.Errorf("OutHelp = %q, want %q", got, want)
	}
}

// The lines a command ends with, one wording for every command.
func TestClosingLines(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{ResultsLine("results/cni", ReadWith("results/cni")), "results: results/cni (loadgen report results/cni)"},
		{ResultsLine("r", "paths.json", ReadWith("r")), "results: r (paths.json; loadgen report r)"},
		{ResultsLine("r", "4 of 6 steps"), "results: r (4 of 6 steps)"},
		{ResultsLine("r", "every probe is a step", "summary in findmax.json"), "results: r (every probe is a step; summary in findmax.json)"},
		{ContinueWith("", "loadgen sweep -o r --resume"), "finished steps are saved; continue with: loadgen sweep -o r --resume"},
		{ContinueWith("the study's", "loadgen study x -o r --resume"), "the study's finished steps are saved; continue with: loadgen study x -o r --resume"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
