package study

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"loadgen/results/compare"
)

// RunPlan runs each step's command line in order, keeps a whole step's
// results on resume, writes a step's files before it runs, collects the
// failed steps and stops on a refused step or an interruption.
func TestRunPlan(t *testing.T) {
	plan := []Step{
		{Name: "a", Dir: "a"},
		{Name: "b", Dir: "k8s-b", Files: map[string]string{"b.yaml": "b: 1\n"}, Whole: true},
		{Name: "c", Dir: "c"},
	}
	head := func(i int) string {
		return "\n== study s, step " + string(rune('0'+i+1)) + " of 3: " + plan[i].Name + " ==\n"
	}
	kept := func(out string) string {
		return "kept: " + filepath.Join(out, "k8s-b") + " holds this step's results (k8s run cannot resume a run: delete the directory to run the step again)\n"
	}
	all := func(string) string { return head(0) + head(1) + head(2) }
	for _, tc := range []struct {
		name     string
		resume   bool
		held     bool                    // k8s-b holds results already
		codes    map[string]compare.Exit // a step's status; OK if none
		cancelAt string                  // the step during which ctx is cancelled
		badFile  bool                    // b.yaml cannot be written
		want     Ran
		ran      []string
		err      string
		progress func(out string) string
	}{
		{name: "every step passes", ran: []string{"a", "b", "c"}, progress: all},
		{name: "failures are collected, the rest run", codes: map[string]compare.Exit{"a": compare.Failed, "b": compare.Aborted, "c": compare.Breached},
			want: Ran{Failed: []string{"a", "b", "c"}, Codes: []compare.Exit{1, 108, 99}}, ran: []string{"a", "b", "c"}, progress: all},
		{name: "an undecided step is collected", codes: map[string]compare.Exit{"c": compare.Undecided},
			want: Ran{Failed: []string{"c"}, Codes: []compare.Exit{98}}, ran: []string{"a", "b", "c"}, progress: all},
		{name: "resume keeps a whole step that holds results", resume: true, held: true, ran: []string{"a", "c"},
			progress: func(out string) string { return head(0) + head(1) + kept(out) + head(2) }},
		{name: "resume runs a whole step that holds none", resume: true, ran: []string{"a", "b", "c"}, progress: all},
		{name: "without resume a whole step runs again", held: true, ran: []string{"a", "b", "c"}, progress: all},
		{name: "a refused step is a bug in the plan", codes: map[string]compare.Exit{"a": compare.Failed, "b": compare.Usage},
			want: Ran{Failed: []string{"a"}, Codes: []compare.Exit{1}}, ran: []string{"a", "b"},
			err:      "step 2 (loadgen run b -o OUT/k8s-b) was refused: a bug in the study's plan",
			progress: func(string) string { return head(0) + head(1) }},
		{name: "an interrupted step stops the plan, not failed", codes: map[string]compare.Exit{"b": compare.Interrupted},
			want: Ran{Interrupted: true}, ran: []string{"a", "b"}, progress: func(string) string { return head(0) + head(1) }},
		{name: "a cancelled context stops the plan after its step", codes: map[string]compare.Exit{"a": compare.Terminated}, cancelAt: "a",
			want: Ran{Failed: []string{"a"}, Codes: []compare.Exit{143}, Interrupted: true}, ran: []string{"a"}, progress: func(string) string { return head(0) }},
		{name: "a step's file that cannot be written stops the plan", badFile: true, ran: []string{"a"}, err: "b.yaml",
			progress: func(string) string { return head(0) + head(1) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			if tc.held {
				mkfile(t, filepath.Join(out, "k8s-b", "manifest.json"))
			}
			if tc.badFile {
				if err := os.Mkdir(filepath.Join(out, "b.yaml"), 0o755); err != nil {
					t.Fatal(err)
				}
				mkfile(t, filepath.Join(out, "b.yaml", "x"))
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var ran []string
			var progress strings.Builder
			r := Runner{Study: "s", Out: out, Resume: tc.resume, Progress: &progress,
				Args: func(st Step) []string { return []string{"run", st.Name, "-o", filepath.Join(out, st.Dir)} },
				RunStep: func(ctx context.Context, args []string) compare.Exit {
					name := args[1]
					ran = append(ran, name)
					if name == "b" {
						if b, err := os.ReadFile(filepath.Join(out, "b.yaml")); err != nil || string(b) != "b: 1\n" {
							t.Errorf("step b runs without its file: %q %v", b, err)
						}
					}
					if name == tc.cancelAt {
						cancel()
					}
					return tc.codes[name]
				}}
			got, err := r.RunPlan(ctx, plan)
			if errText := strings.ReplaceAll(errString(err), out, "OUT"); tc.err == "" && err != nil || !strings.Contains(errText, tc.err) {
				t.Errorf("error %q, want %q", errText, tc.err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
			if !reflect.DeepEqual(ran, tc.ran) {
				t.Errorf("ran %v, want %v", ran, tc.ran)
			}
			if want := tc.progress(out); progress.String() != want {
				t.Errorf("progress\n%s\nwant\n%s", progress.String(), want)
			}
		})
	}
}

// CheckOut refuses a directory to resume that is not there and one to
// start in that holds anything.
func TestCheckOut(t *testing.T) {
	for _, tc := range []struct {
		name   string
		dir    string // "missing", "empty" or "held"
		resume bool
		err    string
	}{
		{"start in a new directory", "missing", false, ""},
		{"start in an empty one", "empty", false, ""},
		{"start where results are", "held", false, "OUT already holds results: add --resume to continue the study, or choose another -o"},
		{"resume nothing", "missing", true, "--resume: OUT holds no study: drop --resume to start one there"},
		{"resume an empty directory", "empty", true, ""},
		{"resume a study", "held", true, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			switch tc.dir {
			case "empty":
				if err := os.Mkdir(dir, 0o755); err != nil {
					t.Fatal(err)
				}
			case "held":
				mkfile(t, filepath.Join(dir, Marker))
			}
			if got := strings.ReplaceAll(errString(CheckOut(dir, tc.resume)), dir, "OUT"); got != tc.err {
				t.Errorf("got %q, want %q", got, tc.err)
			}
		})
	}
}

func mkfile(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
