package main

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"loadgen/loadgen"
	"loadgen/loadgen/metrics"
	"loadgen/loadgen/sweep"
	"loadgen/results"
	"loadgen/results/store"
)

type sweepFlags struct {
	file     string
	trimFrom time.Duration // --trim-start: the cost window's
	trimTo   time.Duration // --trim-end
	out      string
	resume   bool
	paths    []string
	watches  []string
	target   string
	ladder   string
	payloads string
	protocol string
	endpoint string
	call     string
	data     string
	protoset string
	duration time.Duration
	warmup   time.Duration
	timeout  time.Duration
	repeats  int
	rates    string
	arrival  arrivalFlags
	quiet    bool
	dryRun   bool
	check    checkFlags
	abort    abortFlags
	findMax  bool
	slo      string
	prom     string
	promHold time.Duration
	wide     bool
	ui       uiFlags // --ui: the live dashboard
	labels   results.Labels
}

func newSweepCmd() *cobra.Command {
	f := &sweepFlags{}
	cmd := &cobra.Command{
		Use:   "sweep [-f sweep.yaml] [-o DIR] [--resume]",
		Short: "Drive the same target through each path across a connection ladder and payload sizes",
		Long: `Run the same load through each path (baseline, proxy, sidecar …) for every step
of a connection/thread ladder and every payload size, recording RPS, latency to
p99.99, errors, and the CPU and memory of the processes watched on each path.

Without -f or --path, runs the built-in demo: loadgen's httpbin target, and
(where nginx is installed) a real nginx reverse proxy in front of it, swept
over ` + sweep.DemoOutline() + `; --ladder, --payloads, -d,
--warmup, --timeout, --repeats, -R and --endpoint change that plan.

Results go to a directory: manifest.json (the plan and environment) and one
JSON file per step, written as each step ends. --resume skips the steps
already complete (without -f or --path, it continues the plan saved there);
Ctrl-C keeps every finished step.

A sweep file (YAML; every key may also be given as a flag, which wins):

  paths:
    - name: baseline
      url: http://127.0.0.1:8080
    - name: nginx
      url: http://127.0.0.1:8081
      watch: {process: nginx}     # or {pid: 1234, name: nginx} or {cgroup: /sys/fs/cgroup/...}
    - name: nginx-tls
      url: https://127.0.0.1:8443
      cacert: ca.pem              # or insecure: true
      cert: client.pem            # a client certificate for mutual TLS (PEM),
      key: client.key             # and its key
      new_conn: true              # a new connection (TLS handshake) per request
      workers: 2                  # the proxy's worker_processes: the report's sizing table
      netns: lab-pod1             # send from this network namespace (ip netns list)
  target: {pid: 1200}             # the target's processes, on every path
  ladder: c1t1..c128t128          # doubling, or a list: [c1t1, c4t4]
  payloads: [100, 1KiB, 1MiB]     # /bytes/{size} for http, --size for grpc/tcp
  protocol: http1
  endpoint: /bytes/{size}
  duration: 30s
  warmup: 5s
  repeats: 3
  rate: 0                         # closed loop; or requests/s, or a list
  call: pkg.Service/Method        # protocol grpc: any method (data: JSON, protoset: FILE)`,
		Example: `  loadgen sweep
  loadgen sweep -f sweep.yaml -o results/istio
  loadgen sweep -f sweep.yaml -o results/istio --resume
  loadgen sweep --path baseline=http://127.0.0.1:8080 --path nginx=http://127.0.0.1:8081 \
      --watch nginx=name:nginx --ladder c1t1..c16t16 --payloads 100,1KiB -d 10s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return f.ui.done(cmd.Context(), runSweep(cmd, f)) },
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVarP(&f.file, "file", "f", "", "sweep file (YAML), e.g. sweep.yaml; flags given with it override its keys (default: --path, or the built-in demo)")
	fl.StringVarP(&f.out, "out", "o", "", store.OutHelp("sweep"))
	fl.BoolVar(&f.resume, "resume", false, "continue the sweep in -o, skipping complete steps")
	fl.StringArrayVar(&f.paths, "path", nil, "a path NAME=URL, e.g. nginx=http://127.0.0.1:8081 (repeatable; the one named baseline is the baseline)")
	fl.StringArrayVar(&f.watches, "watch", nil, "watch processes on a path (repeatable), e.g. NAME=name:nginx | NAME=pid:123 | NAME=cgroup:/sys/fs/cgroup/…")
	fl.StringVar(&f.target, "target-watch", "", "watch the target's processes on every path, e.g. name:myapp, pid:123 or cgroup:/sys/fs/cgroup/…")
	fl.StringVar(&f.ladder, "ladder", sweep.DefaultLadder, "connection/thread ladder: cNtM rungs, a doubling range (c1t1..c128t128) or a list (c1t1,c4t4)")
	fl.StringVar(&f.payloads, "payloads", sweep.DefaultPayloads, "payload sizes, comma-separated, in bytes or KiB/MiB, e.g. 100,1KiB,1MiB (/bytes/{size} for http, --size for grpc and tcp)")
	fl.StringVarP(&f.protocol, "protocol", "p", sweep.DefaultProtocol, "protocol of every step")
	fl.StringVar(&f.endpoint, "endpoint", sweep.DefaultEndpoint, "HTTP path; {size} becomes the payload size")
	fl.StringVar(&f.call, "call", "", "-p grpc, grpc-stream: call this method of the target, pkg.Service/Method, e.g. helloworld.Greeter/SayHello (see loadgen run --call)")
	fl.StringVar(&f.data, "data", "", "with --call: the request message as JSON, e.g. '{\"name\":\"x\"}', or @FILE (default {})")
	fl.StringVar(&f.protoset, "protoset", "", "with --call: a FileDescriptorSet, e.g. api.protoset, instead of server reflection")
	durationVarP(fl, &f.duration, "duration", "d", sweep.DefaultDuration, "measured duration of each step (30s, 1m30s, or plain seconds)")
	durationVarP(fl, &f.warmup, "warmup", "", 0, "warm-up before each step's measured window, excluded from results, e.g. 5s (default none)")
	durationVarP(fl, &f.trimFrom, "trim-start", "", 0, "start sampling the watched processes' CPU and memory this long into each step's measured window, e.g. 62s as istio/tools (default 0s: from its start); latency keeps the whole window")
	durationVarP(fl, &f.trimTo, "trim-end", "", 0, "stop sampling the watched processes this long before each step's measured window ends (istio/tools: 30s); default min(1s, a quarter of the window)")
	durationVarP(fl, &f.timeout, "timeout", "", loadgen.DefaultTimeout, "per-request timeout, a hard bound")
	countVarP(fl, &f.repeats, "repeats", "", sweep.DefaultRepeats, "repeats of every step")
	fl.StringVarP(&f.rates, "rate", "R", sweep.DefaultRates, "open-loop rates, comma-separated, e.g. 0,1k,2.5k (0 = closed loop)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress output")
	fl.BoolVar(&f.dryRun, "dry-run", false, "check the sweep and print its plan, step by step, without sending any load")
	f.check.registerSweep(fl)
	f.abort.register(fl, true)
	f.arrival.register(fl)
	fl.BoolVar(&f.findMax, "find-max", false, "search each path's highest open-loop rate that holds --slo (instead of the ladder of rates)")
	fl.StringVar(&f.prom, "prometheus", "", "serve live metrics in the Prometheus text format on ADDR/metrics, e.g. 127.0.0.1:9464, while the sweep runs (requests, errors, latency, rate, CPU, the step running)")
	durationVarP(fl, &f.promHold, "prometheus-hold", "", 0, "with --prometheus: keep serving the final figures this long after the sweep, for a last scrape, e.g. 15s")
	f.ui.register(fl, "sweep")
	fl.StringVar(&f.slo, "slo", "", "with --find-max: the objective, e.g. 'p99<10ms,errors<0.1%'")
	fl.BoolVar(&f.wide, "wide", false, wideUsage)
	labelFlag(fl, &f.labels)
	return cmd
}

// spec builds the sweep: from -f's file, or from base (a resume's saved
// plan), with the flags given on the command line over its keys, as size
// and lab take theirs; or from the flags alone.
func (f *sweepFlags) spec(cmd *cobra.Command, base *sweep.Spec) (*sweep.Spec, error) {
	if f.file != "" {
		fh, err := os.Open(f.file)
		if err != nil {
			return nil, err
		}
		defer fh.Close()
		s, err := sweep.Parse(fh)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.file, err)
		}
		base = &s
	}
	from := "the sweep from flags"
	switch {
	case f.file != "":
		from = f.file + " with the flags over it"
	case base != nil:
		from = "the sweep saved in " + f.out + " with the flags over it"
	}
	s, err := f.overlay(cmd, base)
	if err != nil {
		return nil, err
	}
	if err := s.Complete(); err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	return s, nil
}

// overlay is sweep.Overlay of base (nil: a sweep of the flags alone) and
// the flags' values: which wins is the library's rule.
func (f *sweepFlags) overlay(cmd *cobra.Command, base *sweep.Spec) (*sweep.Spec, error) {
	return sweep.Overlay(base, f.values(), cmd.Flags().Changed)
}

// values are the flags that set a plan's keys.
func (f *sweepFlags) values() sweep.FlagValues {
	return sweep.FlagValues{
		Protocol: f.protocol, Call: f.call, Data: f.data, Protoset: f.protoset,
		Duration: f.duration, Warmup: f.warmup, Timeout: f.timeout,
		TrimStart: f.trimFrom, TrimEnd: f.trimTo, Repeats: f.repeats,
		Paths: f.paths, Watches: f.watches, TargetWatch: f.target,
		Ladder: f.ladder, Rates: f.rates,
		Arrival: f.arrival.process, Jitter: f.arrival.jitter, FindMax: f.findMax,
		Endpoint: f.endpoint, Payloads: f.payloads,
	}
}

// demoPlan is the built-in demo's plan (or, on --resume, the demo's
// saved in -o) with every flag given on the command line over it, as a
// sweep file takes them: --ladder, --payloads, -d, --warmup, --timeout,
// --repeats, -R, --endpoint. The flags that cannot apply to the demo's
// HTTP/1.1 servers are refused, never ignored. Its paths' URLs say what
// startDemo starts.
func (f *sweepFlags) demoPlan(cmd *cobra.Command, saved *sweep.Spec) (*sweep.Spec, error) {
	if err := sweep.DemoRefuses(cmd.Flags().Changed, f.protocol); err != nil {
		return nil, err
	}
	base := saved
	if base == nil {
		base = sweep.Demo(demoHasNginx())
	}
	plan, err := f.overlay(cmd, base)
	if err != nil {
		return nil, err
	}
	if err := plan.CompleteDemo(); err != nil {
		return nil, err // checked where startDemo's servers will be
	}
	return plan, nil
}

func runSweep(cmd *cobra.Command, f *sweepFlags) error {
	ctx := cmd.Context()
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	f.check.out = stdout
	if store.IsStdout(f.check.junit) {
		stdout = stderr // standard output takes the JUnit report, the table goes to stderr
	}
	if err := f.check.parse(); err != nil {
		return err
	}
	if err := f.abort.parse(&f.check, f.findMax); err != nil {
		return err
	}
	slo, sloText, err := sweep.ParseFindMax(f.findMax, f.slo)
	if err != nil {
		return err
	}
	if f.out, err = store.OutDir(f.out, "sweep", f.resume, "sweep", time.Now()); err != nil {
		return err // before anything starts
	}
	saved, useDemo, err := sweep.Origin(f.out, f.resume, f.file != "" || len(f.paths) > 0)
	if err != nil {
		return err
	}
	var spec *sweep.Spec
	if useDemo {
		spec, err = f.demoPlan(cmd, saved)
	} else {
		spec, err = f.spec(cmd, saved)
	}
	if err != nil {
		return err
	}
	if f.resume {
		if err := sweep.CheckResume(f.out, spec, f.findMax); err != nil {
			return err // before the demo's servers or any sidecar start
		}
	}
	var demo *demoPaths
	if line := proxyNotice(spec.Protocol, spec.URLs(), os.Getenv); line != "" {
		fmt.Fprintln(stderr, line) // the sweep connects directly too
	}
	if !f.dryRun {
		cleanLeftovers(ctx, stderr) // what killed runs left, before this sweep makes its own
	}
	if useDemo && !f.dryRun {
		d, err := startDemo(ctx, stderr, spec)
		if err != nil {
			return failf("demo: %v", err)
		}
		defer d.Close()
		demo = d
		spec = d.spec
	}
	checkWatches(stderr, spec) // names pid: watches, warns of name: watches matching others
	if err := watchedIn(f.check.parsed, spec.WatchNames(), true); err != nil {
		return err // before any load
	}
	var cars *sidecarPaths
	if spec.HasSidecars() && !f.dryRun {
		var err error
		if cars, err = startSidecarPaths(ctx, spec); err != nil {
			return failf("%v", err)
		}
		defer cars.Close()
	}
	var live *metrics.Exporter
	if f.prom != "" && !f.dryRun {
		x, url, stop, err := serveMetrics(f.prom, f.labels, stderr)
		if err != nil {
			return err
		}
		defer func() {
			holdMetrics(ctx, f.promHold, stderr, url) // Ctrl-C ends it: the sweep already says it was interrupted
			stop()
		}()
		live = x
	}
	if err := f.startUI(spec, stderr); err != nil {
		return err
	}
	job := sweepJob{
		ui:   f.ui.state,
		spec: spec, out: f.out, resume: f.resume, quiet: f.quiet, check: &f.check, sidecars: cars, live: live,
		findMax: f.findMax, slo: slo, sloText: sloText, dryRun: f.dryRun, wide: f.wide, abort: &f.abort,
		resumeCmd: sweep.ResumeCommand("sweep", resumeFlags(cmd), f.out), labels: f.labels,
	}
	if demo != nil {
		job.note = demo.note
	}
	return job.execute(ctx, stdout, stderr)
}
