package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every example runs as written: each is checked and its plan printed,
// with nothing built or sent.
func TestExamplesDryRun(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		steps int
	}{
		{[]string{"sweep", "-f", "../../examples/sidecars.yaml", "--dry-run"}, 17 * 7 * 2},
		{[]string{"size", "-f", "../../examples/ingress-sizing.yaml", "--dry-run"}, 4},
		{[]string{"lab", "-f", "../../examples/lab-matrix.yaml", "--dry-run"}, 3 * 6 * 10},
		{[]string{"sweep", "-f", "../../examples/compose/sweep.yaml", "--dry-run"}, 3 * 4 * 2},
	} {
		t.Run(tc.args[2], func(t *testing.T) {
			code, out, stderr := cli(t, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d: %s%s", code, out, stderr)
			}
			if n := len(regexp.MustCompile(`(?m)^\d+ +\S+_r\d+ `).FindAllString(out, -1)); n != tc.steps {
				t.Errorf("%d steps in the plan, want %d:\n%s", n, tc.steps, out)
			}
		})
	}
}

// An options file sets flags through their own parsers, the command line
// wins over it, and a key that is no option is refused.
func TestOptionsFile(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := dir + "/o.yaml"
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	code, out, _ := cli(t, "size", "--dry-run", "-f", write("workers: [1, 3]\nladder: c8t2\n"), "--ladder", "c4t2")
	if code != 0 || !strings.Contains(out, "nginx-w3_c4t2_") || strings.Contains(out, "c8t2") {
		t.Errorf("exit %d: the file's workers and the command line's ladder, want both:\n%s", code, out)
	}
	for body, msg := range map[string]string{
		"bogus: 1\n":         `"bogus" is not an option here`,
		"duration: ten\n":    `"ten" is not a duration`,
		"workers: {a: b}\n":  "want a value or a list",
		"file: other.yaml\n": `"file" is not an option here`,
	} {
		code, _, stderr := cli(t, "size", "--dry-run", "-f", write(body))
		if code != exitUsage || !strings.Contains(stderr, msg) {
			t.Errorf("%q: exit %d, stderr %q, want 2 and %q", body, code, stderr, msg)
		}
	}
}

// exampleFiles is every file of examples/ and how TestExamplesRun runs the
// command its header names: "dry-run" adds --dry-run (a cluster, root or
// load it would need is not touched), "run" runs it as written (its -o
// into a temporary directory), "grafana" only checks the command against
// the command tree (TestGrafanaDashboardLive runs loadgen with a real
// Prometheus scraping it and asks the dashboard's every query).
var exampleFiles = map[string]string{
	"examples/ingress-sizing.yaml":  "dry-run",
	"examples/lab-matrix.yaml":      "dry-run",
	"examples/sidecars.yaml":        "dry-run",
	"examples/k8s-sweep.yaml":       "dry-run",
	"examples/compose/sweep.yaml":   "dry-run",
	"examples/compose/nginx.conf":   "run",
	"examples/compose/envoy.yaml":   "run",
	"examples/grafana/loadgen.json": "grafana",
}

// exampleHeader is what a file says first: its leading comment lines, or
// a JSON file's title and description.
func exampleHeader(t *testing.T, body []byte) []string {
	t.Helper()
	if json.Valid(body) {
		var d struct{ Title, Description string }
		if err := json.Unmarshal(body, &d); err != nil {
			t.Fatal(err)
		}
		// The first lines hold them: a reader opening the file sees them.
		if first := strings.Join(strings.SplitN(string(body), "\n", 4)[:3], "\n"); !strings.Contains(first, `"description"`) {
			t.Errorf("the description is not in the first lines:\n%s", first)
		}
		return []string{d.Title, d.Description}
	}
	var h []string
	for _, l := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(l, "#") {
			break
		}
		h = append(h, strings.TrimPrefix(l, "#"))
	}
	return h
}

// Every file of examples/ says in its first lines what it is for and the
// command that runs it, and that command runs: as a dry run where it
// needs a cluster, root or a long load.
func TestExamplesRun(t *testing.T) {
	var found []string
	err := filepath.WalkDir(filepath.Join(repoRoot, "examples"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(repoRoot, p)
			found = append(found, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		if _, ok := exampleFiles[f]; !ok {
			t.Errorf("%s: a new example: add it to exampleFiles, saying how its command runs", f)
		}
	}
	root := docRoot()
	for file, how := range exampleFiles {
		t.Run(file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join(repoRoot, file))
			if err != nil {
				t.Fatal(err)
			}
			header := exampleHeader(t, body)
			var args []string
			purpose := false
			// A command is an indented comment line (#   loadgen …), or in a
			// JSON description the loadgen run it names.
			for _, l := range header {
				cmd, indented := strings.CutPrefix(l, "   ")
				cmd = strings.TrimPrefix(strings.TrimSpace(cmd), "sudo ")
				switch {
				case indented && strings.HasPrefix(cmd, "loadgen "):
					if args == nil {
						args = shellWords(cmd)[0][1:]
					}
				case strings.Contains(l, "loadgen run "):
					if args == nil {
						args = shellWords(strings.TrimRight(l[strings.Index(l, "loadgen run "):], ".)"))[0][1:]
					}
					purpose = true
				default:
					purpose = purpose || len(strings.TrimSpace(l)) > 40
				}
			}
			if !purpose || args == nil {
				t.Fatalf("the first lines say what it is for: %v, and a loadgen command that runs it: %q\n%s", purpose, args, strings.Join(header, "\n"))
			}
			if err := checkCommand(root, args); err != nil {
				t.Fatalf("its command: %v", err)
			}
			if how == "grafana" {
				return
			}
			dir := t.TempDir()
			for i := 0; i < len(args)-1; i++ {
				switch args[i] {
				case "-o", "--out", "--output":
					args[i+1] = filepath.Join(dir, "out")
				}
			}
			for i, a := range args {
				if strings.HasPrefix(a, "examples/") {
					args[i] = filepath.Join(repoRoot, a)
				}
			}
			if how == "dry-run" && !slices.Contains(args, "--dry-run") {
				args = append(args, "--dry-run")
			}
			if code, out, stderr := cli(t, args...); code != 0 {
				t.Errorf("loadgen %s: exit %d\n%s%s", strings.Join(args, " "), code, out, stderr)
			}
			if entries, _ := os.ReadDir(dir); how == "dry-run" && len(entries) > 0 {
				t.Errorf("a dry run wrote %v", entries)
			}
		})
	}
}
