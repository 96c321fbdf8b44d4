package main

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"loadgen/loadgen"
	"loadgen/loadgen/client"
	"loadgen/loadgen/metrics"
	"loadgen/loadgen/protocol"
	"loadgen/results"
	"loadgen/results/compare"
	"loadgen/results/report"
	"loadgen/results/store"
)

func runLoad(cmd *cobra.Command, f *runFlags, target string) (err error) {
	ctx := cmd.Context()
	if cmd.Flags().Changed("script") {
		return fmt.Errorf("-s %s: loadgen runs no Lua scripts (wrk -s): give the requests with --targets FILE "+
			"(vegeta's format, per request: METHOD URL, headers, @body), or one request with -m, -H and --body or --body-file", f.script)
	}
	if target, err = client.CheckTarget(f.protocol, target); err != nil {
		return err
	}
	cfg, err := f.config(cmd, target)
	if err != nil {
		return err
	}
	f.check.out = cmd.OutOrStdout() // --junit -
	if err := f.check.parse(); err != nil {
		return err // a bad --assert fails before any load
	}
	if f.pcts, err = results.ParsePercentiles(f.percentiles); err != nil {
		return fmt.Errorf("--percentiles: %w", err)
	}
	if err := f.abort.parse(&f.check, false); err != nil {
		return err
	}
	f.abort.apply(&cfg)
	if f.budget, err = compare.ParseErrorBudget(f.maxErrors); err != nil {
		return fmt.Errorf("--max-errors %w", err)
	}
	body, err := f.readBody()
	if err != nil {
		return err
	}
	if err := f.readFeed(); err != nil {
		return err
	}
	if err := f.readTargets(cmd.InOrStdin()); err != nil {
		return err // a bad targets file fails before any load, saying where
	}
	noteProxyEnv(cmd.ErrOrStderr(), f, f.protocol, cfg.Target)
	toStdout, err := f.checkOutputs()
	if err != nil {
		return err // before any load, and before a --call's reflection
	}
	// stdout takes what is written to "-"; summary, wrk's text and the
	// checks, which go to standard error when an output goes to stdout.
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	summary := stdout
	if toStdout {
		summary = stderr
	}
	dialer, err := newDialer(f, &cfg, body)
	if err != nil {
		code, why := compare.NotStarted(client.BuildExit(err), ctx.Err() != nil, cfg.Target)
		switch code {
		case compare.Interrupted:
			return f.interruptedBeforeStart(stderr, cfg.Target, why)
		case compare.Usage:
			return err
		}
		return runFailure{err: err, code: code}
	}
	if err := loadgen.CheckDriver(cfg, dialer); err != nil {
		closeDialer(dialer)
		return err // before the header: Run would refuse it after
	}
	if err := loadgen.CheckFiles(cfg, dialer); err != nil {
		closeDialer(dialer)
		return err // over the file descriptor limit: before the header too
	}
	defer runtime.GOMAXPROCS(setProcs(&cfg, dialer, f.threads, f.cpus))

	var hlog *store.Stream
	if f.hlog != "" {
		hlog = store.CreateOnWrite(f.hlog, stdout) // at the first interval: a run that fails before leaves the file as it was
		defer hlog.Discard()                       // unless committed
		cfg.HistLog = hlog
	}
	onTerminal := !f.quiet && isTerminal(stderr)
	if onTerminal {
		cfg.Progress = progressLine(stderr)
	}
	var live *metrics.Exporter
	ran := false // there are final figures to hold for --prometheus-hold
	if f.prometheus != "" {
		x, url, stop, serr := serveMetrics(f.prometheus, f.labels, stderr)
		if serr != nil {
			closeDialer(dialer)
			return serr
		}
		defer stop()
		defer func() {
			// Ctrl-C ends the hold and leaves the exit status as it was:
			// a finished run's is its verdict's.
			if ran {
				holdMetrics(ctx, f.promHold, stderr, url)
			}
		}()
		live = x
		x.Begin() // every series at zero before the first scrape
		line := cfg.Progress
		cfg.LiveLatency = true
		cfg.Progress = func(p loadgen.Progress) {
			x.Progress(p)
			if line != nil {
				line(p)
			}
		}
	}

	if err := f.startUI(&cfg, stderr); err != nil {
		closeDialer(dialer)
		return err
	}
	defer func() { err = f.ui.done(ctx, err) }() // --ui-linger, then the dashboard stops

	report.WrkHeader(summary, cfg.Config)
	run, err := loadgen.Run(ctx, cfg, dialer)
	f.ui.uiFinish(run, err)
	if onTerminal {
		fmt.Fprint(stderr, "\r\033[K") // the progress line, not --prometheus's hook
	}
	if err != nil {
		if code, why := compare.NotStarted(compare.Failed, ctx.Err() != nil, cfg.Target); code == compare.Interrupted {
			return f.interruptedBeforeStart(stderr, cfg.Target, why)
		}
		failure := f.failure(cfg.Target, cfg.TLS)
		failure.Err = err
		if hint := client.RunHint(ctx, failure); hint != "" {
			err = fmt.Errorf("%w; %s", err, hint)
		}
		if jerr := f.check.noRun(cfg.Target, f.labels, err); jerr != nil {
			fmt.Fprintf(stderr, "loadgen: %v\n", jerr)
		}
		return runFailure{err: err}
	}
	ran = true
	if live != nil {
		live.Finish(metrics.ErrorsByClass(run.Summary.Errors), run.Summary.RPS)
	}
	if err := report.WrkBody(summary, run, f.wrkOptions()); err != nil {
		return runFailure{err: err}
	}
	var failures []string
	if hlog != nil {
		if err := hlog.Commit(); err != nil {
			failures = append(failures, "--hlog: "+err.Error())
		}
	}
	if f.jsonOut != "" {
		b, err := store.EncodeJSON(run)
		if err == nil {
			err = writeOutput(stdout, f.jsonOut, b)
		}
		if err != nil {
			failures = append(failures, "--json: "+err.Error())
		}
	}
	code, why := compare.RunExit(run, f.budget) // JUnit's run case fails with why
	checked, err := f.check.checkRun(summary, run, why)
	if err != nil {
		failures = append(failures, err.Error())
	}
	code, failed := compare.RunOutcome(code, checked, failures)
	if failed != "" {
		return failf("%s", failed)
	}
	switch code {
	case compare.Aborted:
		fmt.Fprintf(stderr, "loadgen: %s; %s\n", run.Aborted, discarded(run.Summary.InFlight))
	case compare.Interrupted:
		fmt.Fprintf(stderr, "loadgen: %s\n", compare.InterruptedLine(discarded(run.Summary.InFlight)))
	case compare.Failed:
		fmt.Fprintf(stderr, "loadgen: the run failed: %s\n", why)
		failure := f.failure(run.Config.Target, run.Config.TLS)
		failure.Errors = run.Summary.Errors
		if hint := client.RunHint(ctx, failure); hint != "" {
			fmt.Fprint(stderr, report.Wrap("loadgen: "+hint, maxWidth, "  "))
		}
	}
	return exitWith(code)
}

// discarded says how many requests in flight a stop discarded: they
// count nowhere, neither answered nor failed.
func discarded(n int64) string {
	switch n {
	case 0:
		return "no request was in flight"
	case 1:
		return "1 request in flight was discarded (not counted)"
	}
	return strconv.FormatInt(n, 10) + " requests in flight were discarded (not counted)"
}

// failure is a run at target that failed, as client.RunHint looks at it;
// tlsOn says whether it ran over TLS.
func (f *runFlags) failure(target string, tlsOn bool) client.Failure {
	x := client.Failure{Protocol: f.protocol, Target: target, NetNS: f.netns, Mix: f.targets != ""}
	if t, err := f.tls.options(); err == nil {
		t.Enabled = tlsOn
		x.TLS = &t
	}
	return x
}

// interruptedBeforeStart ends a run that Ctrl-C stopped before its load
// started (while it connected) with status 130 and why
// (compare.NotStarted), since the error the connect returned blames a
// target that did nothing wrong. A --junit report says the same.
func (f *runFlags) interruptedBeforeStart(stderr io.Writer, target, why string) error {
	if jerr := f.check.noRun(target, f.labels, errors.New(why)); jerr != nil {
		fmt.Fprintf(stderr, "loadgen: %v\n", jerr)
	}
	fmt.Fprintf(stderr, "loadgen: %s\n", why)
	return exitError{code: exitInterrupted}
}

// setProcs gives a run its processors (loadgen.LocalProcs, from this
// machine's CPUs and cgroup quota) and sets GOMAXPROCS as loadgen.MaxProcs
// says: the process is cmd's to change. It returns the GOMAXPROCS before.
func setProcs(cfg *loadgen.Config, d protocol.Dialer, threads, cpus int) (prev int) {
	cfg.Procs = loadgen.LocalProcs(threads, cpus)
	return runtime.GOMAXPROCS(loadgen.MaxProcs(*cfg, d))
}

// progressLine redraws one status line on a terminal.
func progressLine(w io.Writer) func(loadgen.Progress) {
	return func(p loadgen.Progress) {
		total := ""
		if p.Total > 0 {
			total = " / " + p.Total.String()
		}
		fmt.Fprintf(w, "\r\033[K  %s%s  %d requests  %.0f req/s  %d errors",
			p.Elapsed.Round(100*time.Millisecond), total, p.Requests, p.RPS, p.Errors)
	}
}
