package compare

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// WriteText writes the comparison as an aligned table: a row per figure of
// each step (medians over repeats, with their range), B/A, its interval
// over the repeats and the verdict, then a line on regressions, a tally of
// the verdicts and the notes.
func WriteText(w io.Writer, c Comparison) error {
	ew := &errWriter{w: w}
	if c.A != "" || c.B != "" {
		fmt.Fprintf(ew, "A: %s\nB: %s\n", c.A, c.B)
	}
	for _, l := range c.LabelLines {
		fmt.Fprintln(ew, l)
	}
	limit := FormatPercent(c.Options.MaxRegression)
	levels, points, contended, judgedContended := c.kinds()
	fmt.Fprintf(ew, "regression beyond %s: the whole interval of B/A past it; within noise: the interval spans it\n", limit)
	if len(levels) > 0 {
		fmt.Fprintf(ew, "intervals: %s confidence, of B/A over the repeats (pairwise ratios, distribution-free)\n", strings.Join(levels, ", "))
	}
	if points > 0 {
		fmt.Fprintf(ew, "point verdicts (too few repeats for an interval): B/A against a noise band of ±%s\n", FormatPercent(c.Options.noise()))
	}
	fmt.Fprintln(ew)
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "step\tmetric\tA\tB\tB/A\tinterval\tverdict")
	last := ""
	for _, r := range c.Rows {
		step := r.Step
		if step == last {
			step = ""
		}
		last = r.Step
		if r.Note != "" { // not in a column: it would widen it
			fmt.Fprintf(tw, "%s\t%s\t%s: %s\n", step, r.Metric, r.Label(), r.Note)
			continue
		}
		iv := "-"
		if r.Interval.OK() {
			iv = r.intervalCell(len(levels) > 1)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", step, r.Metric, r.cell(r.A), r.cell(r.B), ratio(r.Ratio), iv, r.Label())
	}
	tw.Flush()
	fmt.Fprintln(ew)
	tally := c.tally()
	if reg := c.Regressions(); len(reg) > 0 {
		fmt.Fprintf(ew, "%d %s beyond %s (%s):\n", len(reg), plural(len(reg), "regression"), limit, tally)
		for _, r := range reg {
			fmt.Fprintf(ew, "  %s\n", r.Message())
		}
	} else {
		fmt.Fprintf(ew, "no regression beyond %s (%s)\n", limit, tally)
	}
	if und := c.Undecided(); len(und) > 0 {
		after := "exit status 98"
		if c.Options.AllowContended {
			after = "--allow-contended: they do not fail the check"
		}
		fmt.Fprintf(ew, "%d %s not decidable: worse than %s, but within what contention for CPU on B's side can explain (%s):\n",
			len(und), plural(len(und), "figure"), limit, after)
		for _, r := range und {
			fmt.Fprintf(ew, "  %s\n", r.Message())
		}
	}
	if points > 0 {
		fmt.Fprintf(ew, "note: %s\n", c.pointNote(points))
	}
	switch {
	case judgedContended > 0 && c.Options.JudgeContended:
		fmt.Fprintf(ew, "note: %d %s judged though contended (--judge-contended), without the margin contention could explain: the machine's CPUs (M) or the generator's (G) were saturated on a side\n",
			judgedContended, plural(judgedContended, "figure"))
	case contended > 0 || judgedContended > 0:
		fmt.Fprintf(ew, "note: where the machine's CPUs (M) or the generator's (G) were saturated on B's side, a change is judged against what that contention can explain "+
			"(requests/s down to A's / F, latency up to F × A + the send lag; F from the CPU B lost to other work and its generator's CPU per request): "+
			"past it, a regression; short of it but past %s, not decidable: exit status 98 unless --allow-contended, and a quieter machine decides\n", limit)
	}
	for _, n := range c.Notes {
		fmt.Fprintf(ew, "note: %s\n", n)
	}
	return ew.err
}

// kinds are the confidences of the rows' intervals ("90%"), and how many
// rows were judged on a point, how many were left undecided by
// contention and how many measured contention and were judged.
func (c Comparison) kinds() (levels []string, points, contended, judgedContended int) {
	for _, r := range c.Rows {
		switch {
		case r.Note != "":
		case r.Verdict == Contended:
			contended++
		case r.Point:
			points++
		}
		if r.Note == "" && r.Verdict != Contended && r.Contended != "" {
			judgedContended++
		}
		if r.Note == "" && r.Interval.OK() {
			if l := FormatPercent(r.Interval.Level); !slices.Contains(levels, l) {
				levels = append(levels, l)
			}
		}
	}
	return levels, points, contended, judgedContended
}

// pointNote says why points rows were judged without an interval.
func (c Comparison) pointNote(points int) string {
	single := true
	for _, r := range c.Rows {
		if r.Point && r.Note == "" && (r.A.N > 1 || r.B.N > 1) {
			single = false
		}
	}
	what := fmt.Sprintf("%d %s marked (point) have too few repeats for an interval of %s confidence (3 a side give 90%%)", points, plural(points, "figure"), FormatPercent(MinLevel))
	if single {
		what = fmt.Sprintf("one repeat a side: %d %s marked (point)", points, plural(points, "figure"))
	}
	return what + ": noise cannot be told from a change; their verdicts compare B with A and the noise band alone, and a REGRESSION (point) fails the check as before; loadgen sweep --repeats 3 on both sides gives each ratio an interval and judges by it"
}

// tally counts the verdicts other than regressions: "3 within noise, 12
// holds, 1 better".
func (c Comparison) tally() string {
	counts := map[string]int{}
	for _, r := range c.Rows {
		k := string(r.Verdict)
		switch {
		case r.Verdict == Regression:
			continue
		case r.Verdict == Contended:
			k = "contended (not decidable)"
		case r.Point && r.Note == "":
			k += " (point)"
		case r.Verdict == Worse:
			k = "worse within " + FormatPercent(c.Options.MaxRegression)
		}
		counts[k]++
	}
	var parts []string
	for _, k := range []string{string(WithinNoise), string(Holds), "worse within " + FormatPercent(c.Options.MaxRegression), string(Better),
		"same (point)", "worse (point)", "better (point)", "contended (not decidable)", string(Missing)} {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], k))
		}
	}
	if len(parts) == 0 {
		return "nothing else"
	}
	return strings.Join(parts, ", ")
}

// intervalCell is the interval in the table: "1.21..1.35" (for errors, in
// percentage points: "+0.1..+0.3 pt"), with its confidence when the rows'
// differ.
func (r Row) intervalCell(level bool) string {
	iv := r.Interval
	s := ratio(iv.Lo) + ".." + ratio(iv.Hi)
	if r.Metric == "errors" {
		s = signed(100*iv.Lo) + ".." + signed(100*iv.Hi) + " pt"
	}
	if level {
		s += " " + FormatPercent(iv.Level)
	}
	return s
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
