package main

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"loadgen/results/report"
)

// longLines lists the lines of text wider than maxWidth columns.
func longLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if n := utf8.RuneCountInString(l); n > maxWidth {
			out = append(out, fmt.Sprintf("%d: %s", n, l))
		}
	}
	return out
}

// Every command's --help fits 100 columns: its text, its examples, its
// subcommands' one-liners and its flags (wrapped under their column).
func TestHelpFitsWidth(t *testing.T) {
	var walk func(c *cobra.Command, path []string)
	n := 0
	walk = func(c *cobra.Command, path []string) {
		n++
		code, out, stderr := cli(t, append(path, "--help")...)
		if code != 0 {
			t.Errorf("%v --help: exit %d: %s", path, code, stderr)
		}
		if long := longLines(out); len(long) > 0 {
			t.Errorf("loadgen %s --help: %d lines over %d columns:\n%s", strings.Join(path, " "), len(long), maxWidth, strings.Join(long, "\n"))
		}
		for _, sub := range c.Commands() {
			if sub.Name() == "help" {
				continue
			}
			walk(sub, append(append([]string(nil), path...), sub.Name()))
		}
	}
	walk(newRoot(nil, nil), nil)
	if n < 20 {
		t.Errorf("walked %d commands", n)
	}
}

// An open-loop run that cannot keep up: the ramp's Rate: line and the
// warnings fit 100 columns.
func TestOpenLoopLinesFitWidth(t *testing.T) {
	url := startHTTPBin(t) + "/get"
	code, out, stderr := cli(t, "run", "-c", "1", "-t", "1", "-d", "1s", "-R", "ramp:1000-400000/1s", url)
	if code != 0 && code != exitFail {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Rate: asked ramp:", "WARNING: the schedule slipped"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if long := longLines(out + stderr); len(long) > 0 {
		t.Errorf("lines over %d columns:\n%s", maxWidth, strings.Join(long, "\n"))
	}
}

// The notes printed under a sweep's tables keep to 100 columns too.
func TestFootnotesFitWidth(t *testing.T) {
	if long := longLines(report.FindMaxLegend); len(long) > 0 {
		t.Errorf("the find-max legend has lines over %d columns:\n%s", maxWidth, strings.Join(long, "\n"))
	}
}
