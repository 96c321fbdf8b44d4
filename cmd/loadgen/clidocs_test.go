package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/cli and docs/man from the commands (make docs)")

// The CLI reference, generated from the command tree by cobra's own
// generator: one Markdown page and one man page per command.
const (
	cliDocsDir = "../../docs/cli"
	manDir     = "../../docs/man"
)

// manDateMark is the date the man pages are generated with, left out of
// them: a page changes with its command, not with the day it was made.
var manDateMark = time.Date(1999, time.January, 1, 0, 0, 0, 0, time.UTC)

// writeCLIDocs writes the reference of loadgen's commands: Markdown into
// mdDir (loadgen.md, loadgen_run.md, …) and man pages into mdDir's sibling
// manDir (loadgen.1, loadgen-run.1, …). Both are deterministic.
func writeCLIDocs(mdDir, manDir string) error {
	root := newRoot(io.Discard, io.Discard)
	root.InitDefaultVersionFlag()
	var all func(c *cobra.Command)
	all = func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		for _, s := range c.Commands() {
			all(s)
		}
	}
	all(root)
	for _, d := range []string{mdDir, manDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := doc.GenMarkdownTree(root, mdDir); err != nil {
		return err
	}
	header := &doc.GenManHeader{Title: "LOADGEN", Section: "1", Source: "loadgen", Manual: "loadgen manual", Date: &manDateMark}
	if err := doc.GenManTree(root, header, manDir); err != nil {
		return err
	}
	pages, err := filepath.Glob(filepath.Join(manDir, "*.1"))
	if err != nil {
		return err
	}
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		b = bytes.Replace(b, []byte(`"`+manDateMark.Format("Jan 2006")+`"`), []byte(`""`), 1)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// generated lists the reference's files in dir: name → content.
func generated(t *testing.T, dir, pattern string) map[string][]byte {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, pattern))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(n)] = b
	}
	return out
}

// The reference in docs/cli and docs/man is what the commands generate:
// a flag, command or help text changed without `make docs` fails here.
// `go test ./cmd/loadgen -run TestCLIReference -update-docs` rewrites it.
func TestCLIReference(t *testing.T) {
	if *updateDocs {
		for dir, pattern := range map[string]string{cliDocsDir: "loadgen*.md", manDir: "loadgen*.1"} {
			old, _ := filepath.Glob(filepath.Join(dir, pattern))
			for _, f := range old {
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := writeCLIDocs(cliDocsDir, manDir); err != nil {
			t.Fatal(err)
		}
	}
	tmp := t.TempDir()
	md, man := filepath.Join(tmp, "cli"), filepath.Join(tmp, "man")
	if err := writeCLIDocs(md, man); err != nil {
		t.Fatal(err)
	}
	for _, set := range []struct{ want, have, pattern string }{
		{md, cliDocsDir, "loadgen*.md"},
		{man, manDir, "loadgen*.1"},
	} {
		want, have := generated(t, set.want, set.pattern), generated(t, set.have, set.pattern)
		if len(want) < 20 {
			t.Fatalf("%d pages generated in %s, want one per command", len(want), set.want)
		}
		var stale []string
		for name, b := range want {
			if !bytes.Equal(have[name], b) {
				stale = append(stale, name)
			}
		}
		for name := range have {
			if _, ok := want[name]; !ok {
				stale = append(stale, name+" (no such command)")
			}
		}
		slices.Sort(stale)
		if len(stale) > 0 {
			t.Errorf("the CLI reference in %s is stale (run make docs): %s", strings.TrimPrefix(set.have, "../../"), strings.Join(stale, ", "))
		}
	}
}

// Two generations in a row are the same bytes: no date, no machine's
// figure (the number of CPUs is named, not counted) in the reference.
func TestCLIReferenceDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	t.Setenv("SOURCE_DATE_EPOCH", "")
	if err := writeCLIDocs(filepath.Join(a, "cli"), filepath.Join(a, "man")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", "/elsewhere/config")
	t.Setenv("HOME", t.TempDir())
	if err := writeCLIDocs(filepath.Join(b, "cli"), filepath.Join(b, "man")); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"cli", "man"} {
		x, y := generated(t, filepath.Join(a, sub), "*"), generated(t, filepath.Join(b, sub), "*")
		if len(x) != len(y) {
			t.Fatalf("%s: %d files, then %d", sub, len(x), len(y))
		}
		for name, bx := range x {
			if !bytes.Equal(bx, y[name]) {
				t.Errorf("%s/%s differs between two generations", sub, name)
			}
		}
	}
	page := generated(t, filepath.Join(a, "man"), "loadgen-run.1")["loadgen-run.1"]
	if bytes.Contains(page, []byte(time.Now().Format("Jan 2006"))) || bytes.Contains(page, []byte("Auto generated")) {
		t.Errorf("loadgen-run.1 carries a date or cobra's tag:\n%s", page[:min(len(page), 300)])
	}
}
