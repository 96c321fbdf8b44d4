package main

import (
	"io"
	"os"

	"golang.org/x/term"

	"loadgen/results/report"
)

// tableOptions fit the tables printed on w to its terminal's width
// (report.DefaultWidth when w is not a terminal); wide shows every column.
func tableOptions(w io.Writer, wide bool) report.TableOptions {
	opt := report.TableOptions{Wide: wide}
	if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		if cols, _, err := term.GetSize(int(f.Fd())); err == nil && cols > 0 {
			opt.Width = cols
		}
	}
	return opt
}

// wideUsage is the help of --wide, where a sweep table is printed.
const wideUsage = "every column of the table; without it the table fits the terminal (120 columns when not one), the columns a reader needs first"
