package main

import (
	"io"
	"os"
	"strconv"

	"golang.org/x/term"

	"loadgen/results/report"
)

// tableOptions fit the tables printed on w to its terminal's width
// (report.DefaultWidth when w is not a terminal); wide shows every column.
func tableOptions(w io.Writer, wide bool) report.TableOptions {
	opt := report.TableOptions{Wide: wide}
	if isTerminal(w) {
		if cols, _, err := term.GetSize(int(w.(*os.File).Fd())); err == nil && cols > 0 {
			opt.Width = cols
		}
	}
	return opt
}

// isTerminal tells whether w is a terminal (not /dev/null, a file or a
// pipe): where progress lines are drawn and tables fit its width.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// wideUsage is the help of --wide, where a sweep table is printed.
var wideUsage = "every column of the table; without it the table fits the terminal (" + strconv.Itoa(report.DefaultWidth) + " columns when not one), the columns a reader needs first"

// maxWidth is the columns loadgen's own text keeps to: help, warnings,
// notes under tables.
const maxWidth = 100

// plural is "1 step", "2 steps": n and what, in the plural unless n is 1.
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
