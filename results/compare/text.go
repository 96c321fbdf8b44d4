package compare

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteText writes the comparison as an aligned table: a row per figure of
// each step (medians over repeats, with their range), B/A and the verdict,
// then a line on regressions and the notes.
func WriteText(w io.Writer, c Comparison) error {
	ew := &errWriter{w: w}
	if c.A != "" || c.B != "" {
		fmt.Fprintf(ew, "A: %s\nB: %s\n", c.A, c.B)
	}
	fmt.Fprintf(ew, "noise band ±%s, regression beyond %s\n\n", formatPercent(c.Options.noise()), formatPercent(c.Options.MaxRegression))
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "step\tmetric\tA\tB\tB/A\tverdict")
	last := ""
	for _, r := range c.Rows {
		step := r.Step
		if step == last {
			step = ""
		}
		last = r.Step
		if r.Note != "" { // not in a column: it would widen it
			fmt.Fprintf(tw, "%s\t%s\t%s: %s\n", step, r.Metric, r.Verdict, r.Note)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", step, r.Metric, r.cell(r.A), r.cell(r.B), ratio(r.Ratio), r.Verdict)
	}
	tw.Flush()
	fmt.Fprintln(ew)
	counts := map[Verdict]int{}
	for _, r := range c.Rows {
		counts[r.Verdict]++
	}
	tally := fmt.Sprintf("%d worse within %s, %d better, %d same within noise", counts[Worse],
		formatPercent(c.Options.MaxRegression), counts[Better], counts[Same])
	if m := counts[Missing]; m > 0 {
		tally += fmt.Sprintf(", %d missing", m)
	}
	if reg := c.Regressions(); len(reg) > 0 {
		fmt.Fprintf(ew, "%d %s beyond %s (%s):\n", len(reg), plural(len(reg), "regression"), formatPercent(c.Options.MaxRegression), tally)
		for _, r := range reg {
			fmt.Fprintf(ew, "  %s\n", r.Message())
		}
	} else {
		fmt.Fprintf(ew, "no regression beyond %s (%s)\n", formatPercent(c.Options.MaxRegression), tally)
	}
	for _, n := range c.Notes {
		fmt.Fprintf(ew, "note: %s\n", n)
	}
	return ew.err
}

// cell formats a figure: the median, and the range of repeats.
func (r Row) cell(s Stat) string {
	switch {
	case s.N <= 1:
		return r.format(s.Median)
	case s.Min == s.Max:
		return fmt.Sprintf("%s ×%d", r.format(s.Median), s.N)
	}
	min := r.format(s.Min)
	for _, unit := range []string{"/s", " cores"} {
		min = strings.TrimSuffix(min, unit)
	}
	return fmt.Sprintf("%s [%s..%s ×%d]", r.format(s.Median), min, r.format(s.Max), s.N)
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return len(b), nil
	}
	if _, err := e.w.Write(b); err != nil {
		e.err = err
	}
	return len(b), nil
}
