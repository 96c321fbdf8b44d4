package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"loadgen/loadgen/study"
	"loadgen/loadgen/sweep"
	"loadgen/results/report"
	"loadgen/results/store"
)

type reportFlags struct {
	cpuPrice    float64
	html        string
	csv         string
	csvIstio    string
	markdown    string
	fortio      string
	smp         string
	percentiles bool
	title       string
	wide        bool
}

func newReportCmd() *cobra.Command {
	f := &reportFlags{}
	cmd := &cobra.Command{
		Use:   "report PATH... [--html F] [--markdown F] [--csv F] [--json-fortio F]",
		Short: "Turn saved results into Markdown, HTML with charts, CSV, or fortio/SMP JSON",
		Long: `Read results and write reports. PATH is a sweep's results directory (from
loadgen sweep -o), or one run's JSON (from loadgen run --json, or a sweep's
steps/*.json). Several PATHs go into one report: sweeps of tcp-rr, tcp-crr and
tcp-stream over the same paths fill the CNI path matrix of the HTML report.

Without an output flag, the Markdown summary goes to stdout. Each flag writes
one file, atomically (a link's target is replaced, a device or FIFO written
into); "-" writes to stdout instead, for one of them:

  --html F         one self-contained page: charts per payload (latency
                   percentiles, throughput, latency added over the baseline,
                   errors and timeouts, proxy CPU and memory), the summary
                   tables, and the environment. No network needed to view it.
  --markdown F     the sweep summary tables (medians over repeats)
  --csv F          one row per step, every figure, watched processes' CPU/memory
  --csv-istio F    istio/tools' perf benchmark CSV (its columns and units: µs,
                   millicores, MiB; its labels, _qps_Q_c_C_SIZE_PATH_MODE)
  --json-fortio F  fortio's result JSON (one object per run; an array for several)
  --json-smp F     Service Mesh Performance PerformanceTestResult JSON
  --percentiles    the full latency percentile spectrum (.hgrm, as wrk2 prints) to stdout`,
		Example: `  loadgen report results/2026-12-01-istio
  loadgen report results/2026-12-01-istio --html report.html
  loadgen report results/2026-12-01-istio --csv steps.csv --json-fortio fortio.json
  loadgen report run.json --percentiles
  loadgen report cni-rr cni-crr cni-stream --html cni.html`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("report needs a PATH: a run's JSON file or a sweep's results directory")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runReport(cmd, f, args) },
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVar(&f.html, "html", "", "write the HTML report (one self-contained file) to `FILE`, e.g. report.html")
	fl.StringVar(&f.markdown, "markdown", "", "write the Markdown summary to `FILE` (default stdout when no other output is asked)")
	fl.StringVar(&f.csv, "csv", "", "write one CSV row per step to `FILE`, e.g. steps.csv")
	fl.StringVar(&f.csvIstio, "csv-istio", "", "write istio/tools' perf benchmark CSV (the columns its graph_plotter.py reads) to `FILE`, e.g. istio.csv")
	fl.StringVar(&f.fortio, "json-fortio", "", "write fortio's result JSON to `FILE`, e.g. fortio.json")
	fl.StringVar(&f.smp, "json-smp", "", "write Service Mesh Performance result JSON to `FILE`, e.g. smp.json")
	fl.BoolVar(&f.percentiles, "percentiles", false, "print the full latency percentile spectrum (.hgrm) to stdout")
	fl.StringVar(&f.title, "title", "", "title of the HTML report (default from the results)")
	fl.Float64Var(&f.cpuPrice, "cpu-price", 0, "what one CPU costs a month, e.g. 30 (any currency): adds monthly cost columns to the ingress sizing table")
	fl.BoolVar(&f.wide, "wide", false, "every column in the Markdown sweep tables (by default the columns a reader needs first; HTML and CSV have all)")
	return cmd
}

func runReport(cmd *cobra.Command, f *reportFlags, args []string) error {
	files := []store.Output{{Flag: "--html", Path: f.html}, {Flag: "--markdown", Path: f.markdown}, {Flag: "--csv", Path: f.csv},
		{Flag: "--csv-istio", Path: f.csvIstio}, {Flag: "--json-fortio", Path: f.fortio}, {Flag: "--json-smp", Path: f.smp}}
	if f.percentiles {
		files = append(files, store.Output{Flag: "--percentiles", Path: store.Stdout})
	}
	if _, err := store.CheckOutputs(files...); err != nil {
		return err // a usage error, as run's, before reading anything
	}
	var sweeps []*report.Sweep
	var published []report.Published
	for _, a := range args {
		s, err := study.Read(a)
		if err != nil {
			return err // the input is wrong: a usage error, naming the file
		}
		sweeps = append(sweeps, s...)
		if tables, ok, err := study.Tables(a); err != nil {
			return err
		} else if ok {
			published = append(published, tables...)
		}
	}
	stdout := cmd.OutOrStdout()
	// a report to write: its flag, its path and the function writing it
	type reportFile struct {
		flag, path string
		write      func(io.Writer) error
	}
	var outs []reportFile
	add := func(flag, path string, write func(io.Writer) error) {
		if path != "" {
			outs = append(outs, reportFile{flag, path, write})
		}
	}
	maxes, err := sweep.ReadBrackets(sweeps)
	if err != nil {
		return err // a find-max directory's summary is unreadable: the input is wrong
	}
	add("html", f.html, func(w io.Writer) error {
		return report.HTML(w, sweeps, report.Options{Title: f.title, Generated: time.Now(), CPUPrice: f.cpuPrice, Published: published, FindMax: maxes})
	})
	markdown := func(w io.Writer) error {
		return report.Markdown(w, sweeps, report.Options{CPUPrice: f.cpuPrice, Wide: f.wide, Published: published, FindMax: maxes})
	}
	add("markdown", f.markdown, markdown)
	add("csv", f.csv, func(w io.Writer) error { return report.CSV(w, sweeps) })
	add("csv-istio", f.csvIstio, func(w io.Writer) error { return report.IstioCSV(w, sweeps) })
	add("json-fortio", f.fortio, func(w io.Writer) error { return report.Fortio(w, sweeps) })
	add("json-smp", f.smp, func(w io.Writer) error { return report.SMP(w, sweeps) })
	if f.percentiles {
		add("percentiles", "-", func(w io.Writer) error { return report.Percentiles(w, sweeps) })
	}
	if len(outs) == 0 {
		add("markdown", "-", markdown)
	}
	var failures []string
	for _, o := range outs {
		var buf bytes.Buffer
		if err := o.write(&buf); err != nil {
			failures = append(failures, fmt.Sprintf("--%s: %v", o.flag, err))
			continue
		}
		if err := writeOutput(stdout, o.path, buf.Bytes()); err != nil {
			failures = append(failures, fmt.Sprintf("--%s: %v", o.flag, err))
		}
	}
	if len(failures) > 0 {
		return failf("%s", strings.Join(failures, "; "))
	}
	return nil
}
