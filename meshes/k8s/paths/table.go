package paths

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"loadgen/results"
	"loadgen/results/store"
)

// The table of a paths run: each path × test's figure per repeat, their
// median and spread, the ratio to the hostNetwork row of the same test and
// the verdict against the tolerance. It is written as paths.json beside
// the per-test results directories, and printed.

// File is the table's file in a paths run's results directory.
const File = "paths.json"

// Verdicts of a row.
const (
	VerdictBaseline      = "baseline"        // a hostNetwork row: what the others are a ratio to
	VerdictOK            = "ok"              // within the tolerance of its hostNetwork row
	VerdictBelow         = "below-tolerance" // further below its hostNetwork row than the tolerance
	VerdictFailed        = "failed"          // no repeat measured anything
	VerdictNoBaseline    = "no-baseline"     // measured, but its hostNetwork row was not
	VerdictNotMeasurable = "not-measurable"  // the path cannot run on this cluster
	VerdictNotRun        = "not-run"         // the run was interrupted before it
	VerdictNotJudged     = "not-judged"      // measured, its ratio shown; the rule (--judge) does not judge it
)

// Sample is one measurement's outcome: its figure, or why there is none.
type Sample struct {
	Path, Test string
	Repeat     int
	Figure     float64
	Failed     string
	// Saturated: the client's generator (G) or the client's machine (M)
	// ran out of CPU: the figure measures contention too.
	GeneratorSaturated, MachineSaturated bool
}

// SampleOf is a measurement's sample from its step.
func SampleOf(m Measurement, st *results.Step) Sample {
	s := Sample{Path: m.Path.Name, Test: m.Test.Name, Repeat: m.Repeat}
	if s.Failed = st.Failure(); s.Failed != "" {
		return s
	}
	s.Figure = Figure(m.Test.Name, st.Run)
	s.GeneratorSaturated = st.Run.Generator.Saturated
	s.MachineSaturated = st.Run.Machine != nil && st.Run.Machine.Saturated
	return s
}

// Figure is a test's figure of a finished run: Gbit/s written for
// TCP_STREAM, Gbit/s the sink received for UDP_STREAM (what a lossy path
// delivers, not what was sent into it), requests answered without error
// per second for the rest (transactions of RR, connections of CRR, HTTP
// requests).
func Figure(test string, r *results.Run) float64 {
	s := r.Summary
	if g := s.Datagrams; test == TestUDPStream && g != nil && g.Span > 0 {
		return float64(g.ReceivedBytes) * 8 / 1e9 / g.Span.D().Seconds()
	}
	if test == TestTCPStream || test == TestUDPStream {
		return s.Gbps()
	}
	if d := s.Duration.D().Seconds(); d > 0 {
		return float64(s.OK()) / d
	}
	return 0
}

// Row is one path × test.
type Row struct {
	Path  string `json:"path"`
	Test  string `json:"test"`
	Unit  string `json:"unit"`
	Title string `json:"title"`
	// Baseline is the hostNetwork row this row's ratio is to.
	Baseline   string `json:"baseline,omitempty"`
	ClientNode string `json:"client_node,omitempty"`
	// Figures are the repeats' figures, in repeat order (failed ones left out).
	Figures []float64 `json:"figures"`
	Median  *float64  `json:"median,omitempty"`
	Min     *float64  `json:"min,omitempty"`
	Max     *float64  `json:"max,omitempty"`
	// Spread is (max − min) / median.
	Spread *float64 `json:"spread,omitempty"`
	// Ratio is the median over the baseline row's median; RatioMin and
	// RatioMax are the repeats' figures over it.
	Ratio    *float64 `json:"ratio,omitempty"`
	RatioMin *float64 `json:"ratio_min,omitempty"`
	RatioMax *float64 `json:"ratio_max,omitempty"`
	Verdict  string   `json:"verdict"`
	Note     string   `json:"note,omitempty"`
	Failures []string `json:"failures,omitempty"`
	// Flags holds G when some repeat's generator was saturated and M when
	// the machine's CPU was (figures measure contention), as loadgen report
	// flags steps.
	Flags string `json:"flags,omitempty"`
}

// Nodes are the nodes a run found and used.
type Nodes struct {
	Schedulable []string `json:"schedulable"`
	Server      string   `json:"server"`
	Other       string   `json:"other,omitempty"`
}

// Table is a paths run's result.
type Table struct {
	Schema          int       `json:"schema"`
	Tool            string    `json:"tool"`
	Kind            string    `json:"kind"` // "k8s-paths"
	Created         time.Time `json:"created"`
	Context         string    `json:"context,omitempty"`
	Server          string    `json:"api_server,omitempty"`
	Namespace       string    `json:"namespace"`
	RunID           string    `json:"run_id"`
	Image           string    `json:"image"`
	DurationSeconds float64   `json:"duration_seconds"`
	Repeats         int       `json:"repeats"`
	Tolerance       float64   `json:"tolerance"` // a fraction: 0.1 is 10%
	// Judge is the rule of the rows the tolerance judges: netperf
	// (k8s-netperf's: TCP_STREAM, pod ↔ pod across nodes) or all.
	Judge       string `json:"judge,omitempty"`
	MessageSize int    `json:"message_size"`
	// StreamSize is TCP_STREAM's write size, when not MessageSize.
	StreamSize      int       `json:"stream_size,omitempty"`
	HTTPConnections int       `json:"http_connections"`
	Nodes           Nodes     `json:"nodes"`
	KubeProxy       ProxyMode `json:"kube_proxy"`
	// Flannel is the Flannel backend the nodes run (their
	// flannel.alpha.coreos.com/backend-type), when they run Flannel.
	Flannel string `json:"flannel_backend,omitempty"`
	// CNI is the datapath's name as asked (--cni), for the studies.
	CNI  string `json:"cni,omitempty"`
	Rows []Row  `json:"rows"`
	// Passed is set when every row measured and no pod path below its
	// tolerance.
	Passed      bool `json:"passed"`
	Interrupted bool `json:"interrupted,omitempty"`
}

// Kind is a paths table's kind.
const Kind = "k8s-paths"

// Tabulate makes the table's rows from the samples: tests, then paths, in
// plan order.
func Tabulate(p *Plan, samples []Sample) []Row {
	var rows []Row
	for _, t := range p.Tests {
		medians := map[string]float64{}
		for _, path := range p.Paths {
			r := Row{Path: path.Name, Test: t.Name, Unit: t.Unit, Title: path.Title, Baseline: path.Baseline,
				ClientNode: path.ClientNode, Figures: []float64{}}
			ran := false
			for _, s := range samples {
				if s.Path != path.Name || s.Test != t.Name {
					continue
				}
				ran = true
				if s.Failed != "" {
					r.Failures = append(r.Failures, fmt.Sprintf("repeat %d: %s", s.Repeat, s.Failed))
				} else {
					r.Figures = append(r.Figures, s.Figure)
				}
				if s.GeneratorSaturated && !strings.Contains(r.Flags, "G") {
					r.Flags += "G"
				}
				if s.MachineSaturated && !strings.Contains(r.Flags, "M") {
					r.Flags += "M"
				}
			}
			switch {
			case !path.Measurable():
				r.Verdict, r.Note = VerdictNotMeasurable, path.NotMeasurable
			case !ran:
				r.Verdict = VerdictNotRun
			case len(r.Figures) == 0:
				r.Verdict = VerdictFailed
			default:
				med, lo, hi := medianOf(r.Figures), slices.Min(r.Figures), slices.Max(r.Figures)
				r.Median, r.Min, r.Max = &med, &lo, &hi
				if med > 0 {
					r.Spread = ptrFloat((hi - lo) / med)
				}
				medians[path.Name] = med
				r.Verdict = VerdictBaseline
				if path.Baseline != "" {
					judged := Judged(p.Options.Judge, path, t.Name)
					r.Verdict = VerdictNotJudged
					if judged {
						r.Verdict = VerdictNoBaseline
					}
					if base, ok := medians[path.Baseline]; ok && base > 0 {
						r.Ratio, r.RatioMin, r.RatioMax = ptrFloat(med/base), ptrFloat(lo/base), ptrFloat(hi/base)
						if judged {
							r.Verdict = Judge(med/base, p.Options.Tolerance)
						}
					}
				}
			}
			rows = append(rows, r)
		}
	}
	return rows
}

// Judge is a pod path's verdict from its ratio to hostNetwork: every
// figure is higher-is-better, so a ratio below 1 − tolerance fails.
func Judge(ratio, tolerance float64) string {
	// A ratio of exactly 1 − tolerance passes; the epsilon keeps 0.9 at
	// 10% from failing by the float's last digit.
	if ratio < 1-tolerance-1e-12 {
		return VerdictBelow
	}
	return VerdictOK
}

// Passed tells whether every measurable row was measured and none fell
// below its tolerance.
func Passed(rows []Row) bool {
	for _, r := range rows {
		switch {
		case r.Verdict == VerdictBelow, r.Verdict == VerdictFailed, r.Verdict == VerdictNoBaseline, r.Verdict == VerdictNotRun:
			return false
		case len(r.Failures) > 0:
			return false
		}
	}
	return true
}

func medianOf(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func ptrFloat(v float64) *float64 { return &v }

// WriteTable writes paths.json into dir.
func WriteTable(dir string, t *Table) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return err
	}
	return store.WriteFile(filepath.Join(dir, File), append(b, '\n'))
}

// ReadTable reads a paths run's paths.json from dir.
func ReadTable(dir string) (*Table, error) {
	path := filepath.Join(dir, File)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t Table
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if t.Kind != Kind {
		return nil, fmt.Errorf("%s: kind %q, want %s", path, t.Kind, Kind)
	}
	return &t, nil
}

// WriteText prints the table: what ran where, one line per path × test,
// the rows that could not run, and the tolerance's verdict.
func (t *Table) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "kube-proxy: %s", t.KubeProxy.Mode)
	if t.KubeProxy.Source != "" {
		fmt.Fprintf(w, " (from %s)", t.KubeProxy.Source)
	}
	if t.KubeProxy.Why != "" {
		fmt.Fprintf(w, " (%s)", t.KubeProxy.Why)
	}
	fmt.Fprintf(w, "\nnodes: servers on %s", t.Nodes.Server)
	if t.Nodes.Other != "" {
		fmt.Fprintf(w, ", cross-node clients on %s", t.Nodes.Other)
	}
	fmt.Fprintf(w, " (schedulable: %s)\n", strings.Join(t.Nodes.Schedulable, ", "))
	switch {
	case t.Flannel != "" && t.CNI != "" && t.CNI != t.Flannel:
		fmt.Fprintf(w, "CNI: %s (as named by --cni); Flannel, %s backend (the nodes' %s)\n", t.CNI, t.Flannel, FlannelBackendAnnotation)
	case t.Flannel != "":
		fmt.Fprintf(w, "CNI: Flannel, %s backend (the nodes' %s)\n", t.Flannel, FlannelBackendAnnotation)
	case t.CNI != "":
		fmt.Fprintf(w, "CNI: %s (as named by --cni)\n", t.CNI)
	}
	msgs := fmt.Sprintf("%d B messages", t.MessageSize)
	if t.StreamSize > 0 && t.StreamSize != t.MessageSize {
		msgs += fmt.Sprintf(" (TCP_STREAM's writes %d B)", t.StreamSize)
	}
	fmt.Fprintf(w, "%d × %gs per path × test, %s, HTTP/1.1 %s with %d connections; ratio: median over its hostNetwork row's\n\n",
		t.Repeats, t.DurationSeconds, msgs, HTTPEndpoint, t.HTTPConnections)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "path\ttest\tmedian\tunit\tmin–max\tspread\tratio\tratio min–max\tflags\tverdict\n")
	flagged := false
	for _, r := range t.Rows {
		med, rng, spread, ratio, rrng := "–", "–", "–", "–", "–"
		if r.Median != nil {
			med, rng = figure(*r.Median, r.Unit), figure(*r.Min, r.Unit)+"–"+figure(*r.Max, r.Unit)
		}
		if r.Spread != nil {
			spread = fmt.Sprintf("%.1f%%", 100**r.Spread)
		}
		if r.Ratio != nil {
			ratio, rrng = fmt.Sprintf("%.2f", *r.Ratio), fmt.Sprintf("%.2f–%.2f", *r.RatioMin, *r.RatioMax)
		} else if r.Verdict == VerdictBaseline {
			ratio = "1 (base)"
		}
		verdict := r.Verdict
		if r.Note != "" {
			verdict = r.Note
		}
		if n := len(r.Failures); n > 0 {
			verdict += fmt.Sprintf(" (%d of %d repeats failed)", n, n+len(r.Figures))
		}
		flagged = flagged || r.Flags != ""
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Path, r.Test, med, r.Unit, rng, spread, ratio, rrng, r.Flags, verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var notes, below, failed []string
	noted := map[string]bool{}
	for _, r := range t.Rows {
		switch {
		case r.Verdict == VerdictNotMeasurable && !noted[r.Path]:
			noted[r.Path] = true
			notes = append(notes, fmt.Sprintf("%s: %s (%s)", r.Path, r.Note, strings.Join(t.Nodes.Schedulable, ", ")))
		case r.Verdict == VerdictBelow:
			below = append(below, fmt.Sprintf("%s %s %.2f", r.Path, r.Test, *r.Ratio))
		}
		for _, f := range r.Failures {
			failed = append(failed, fmt.Sprintf("%s %s %s", r.Path, r.Test, f))
		}
		if r.Verdict == VerdictNoBaseline {
			failed = append(failed, fmt.Sprintf("%s %s: no ratio, its hostNetwork row %s measured nothing", r.Path, r.Test, r.Baseline))
		}
	}
	fmt.Fprintln(w)
	if flagged {
		fmt.Fprintln(w, "flags: G the client's generator was saturated, M the machine's CPU was: those figures measure contention too")
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	for _, f := range failed {
		fmt.Fprintf(w, "failed: %s\n", f)
	}
	tol := fmt.Sprintf("%g%%", 100*t.Tolerance)
	judged := 0
	for _, r := range t.Rows {
		if r.Verdict == VerdictOK || r.Verdict == VerdictBelow || (r.Verdict == VerdictNoBaseline) {
			judged++
		}
	}
	rule := "every pod row (--judge all)"
	if t.Judge != JudgeAll {
		rule = "k8s-netperf's rule: TCP_STREAM, pod ↔ pod across nodes against hostNetwork across nodes (--judge all: every pod row)"
	}
	switch {
	case t.Interrupted:
		fmt.Fprintf(w, "interrupted: the rows not run are marked %s\n", VerdictNotRun)
	case len(below) > 0:
		fmt.Fprintf(w, "tolerance %s, %s: %d of the judged rows fall further below hostNetwork: %s\n", tol, rule, len(below), strings.Join(below, ", "))
	case judged == 0:
		fmt.Fprintf(w, "tolerance %s, %s: no row is judged here (k8s-netperf's rule needs two schedulable nodes and the tcp-stream test)\n", tol, rule)
	case t.Passed:
		fmt.Fprintf(w, "tolerance %s, %s: every judged row is within it of hostNetwork\n", tol, rule)
	}
	return nil
}

// figure prints a figure in its unit's precision.
func figure(v float64, unit string) string {
	if unit == "Gbit/s" {
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.0f", v)
}
