package study

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

func TestCommandLine(t *testing.T) {
	out := t.TempDir()
	if err := os.MkdirAll(filepath.Join(out, "done"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "done", "manifest.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(out, "lab", "tcp"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "lab", "tcp", "manifest.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	sweep := func(dir string) Step { return Step{Dir: dir, Args: []string{"sweep", "-f", OutDir + "/sweep.yaml"}} }
	for _, tc := range []struct {
		name string
		st   Step
		f    StepFlags
		run  bool
		want string // after "sweep -f OUT/sweep.yaml -o OUT/DIR"
	}{
		{"plain", sweep("new"), StepFlags{}, true, ""},
		{"resume, nothing yet", sweep("new"), StepFlags{Resume: true}, true, ""},
		{"resume a sweep", sweep("done"), StepFlags{Resume: true}, true, " --resume"},
		{"resume a directory of sweeps", sweep("lab"), StepFlags{Resume: true}, true, " --resume"},
		{"no resume in the listing", sweep("done"), StepFlags{Resume: true}, false, ""},
		{"a whole step is kept, not resumed", Step{Dir: "done", Args: []string{"sweep", "-f", OutDir + "/sweep.yaml"}, Whole: true}, StepFlags{Resume: true}, true, ""},
		{"checks, labels, junit", sweep("new"), StepFlags{Quiet: true, Asserts: []string{"p99 < 1ms", "errors == 0"}, Labels: []string{"--label", "build=2"}, JUnit: "j-new.xml"}, true,
			" -q --assert p99 < 1ms --assert errors == 0 --label build=2 --junit j-new.xml"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.f.Out = out
			got := strings.Join(tc.st.CommandLine(tc.f, tc.run), " ")
			want := "sweep -f " + out + "/sweep.yaml -o " + filepath.Join(out, tc.st.Dir) + tc.want
			if got != want {
				t.Errorf("got  %q\nwant %q", got, want)
			}
		})
	}
}

func TestCheckNeeds(t *testing.T) {
	root := runtime.GOOS == "linux" && os.Geteuid() == 0
	found, missing := func() error { return nil }, func() error {
		return errors.New("nginx not found on PATH or at /usr/sbin/nginx: apt-get install nginx")
	}
	for _, tc := range []struct {
		name  string
		needs []Need
		nginx func() error
		want  string
	}{
		{"nothing", nil, missing, ""},
		{"a cluster: k8s run says", []Need{NeedCluster}, missing, ""},
		{"nginx found", []Need{NeedNginx}, found, ""},
		{"nginx missing: its own words", []Need{NeedNginx}, missing, "needs nginx: nginx not found on PATH or at /usr/sbin/nginx: apt-get install nginx"},
		{"root", []Need{NeedRoot}, found, map[bool]string{true: "", false: "needs root on Linux (network namespaces): run it as root, e.g. sudo loadgen study x"}[root]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckNeeds(tc.needs, "x", tc.nginx)
			if got := ""; err != nil {
				got = err.Error()
				if got != tc.want {
					t.Errorf("got %q, want %q", got, tc.want)
				}
			} else if tc.want != "" {
				t.Errorf("no error, want %q", tc.want)
			}
		})
	}
}

// WriteMarker writes what Tables and Read know a study's directory by.
func TestWriteMarker(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "made", "here")
	if err := WriteMarker(dir, "nginx-sizing"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, Marker))
	if err != nil {
		t.Fatal(err)
	}
	var mk MarkerFile
	if err := json.Unmarshal(b, &mk); err != nil || !reflect.DeepEqual(mk, MarkerFile{Study: "nginx-sizing"}) {
		t.Errorf("marker %q: %+v, %v", b, mk, err)
	}
	if sweeps, err := Read(dir); err != nil || len(sweeps) != 0 {
		t.Errorf("Read of a marked, empty study: %d sweeps, %v", len(sweeps), err)
	}
}
