package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"loadgen/loadgen"
	"loadgen/loadgen/client"
	"loadgen/loadgen/metrics"
	"loadgen/loadgen/mix"
	"loadgen/loadgen/pace"
	"loadgen/loadgen/protocol"
	"loadgen/results"
	"loadgen/results/compare"
	"loadgen/results/cost"
	"loadgen/results/report"
	"loadgen/results/store"
)

// runFlags are the flags of `loadgen run`, as typed.
type runFlags struct {
	connections  int
	threads      int
	duration     time.Duration
	requests     int64
	headers      []string
	timeout      time.Duration
	latency      bool
	spectrum     bool      // -L: wrk2's latency distribution and percentile spectrum
	uncorrected  bool      // -U: and the uncorrected latency's (open loop)
	percentiles  string    // --percentiles: the summary's latency percentiles
	pcts         []float64 // read from it
	method       string
	streams      int
	body         string
	bodyFile     string
	warmup       time.Duration
	rate         string
	connSchedule string // -c as stages: a closed loop's connection schedule
	arrival      arrivalFlags
	slack        time.Duration
	jsonOut      string
	hlog         string
	protocol     string
	size         int
	newConn      bool
	netns        string
	client       string
	cpus         int
	driver       string
	prometheus   string
	promHold     time.Duration
	quiet        bool
	maxErrors    string
	okStatus     string // --ok-status: the statuses of a success
	budget       compare.ErrorBudget
	health       bool
	call         string // -p grpc: any method, ghz's --call
	data         string
	protoset     string
	proto        []string       // --proto: .proto files for --call's types
	importPaths  []string       // --import-path: where their imports are
	messages     int            // --messages: a streaming call's message count
	window       int            // --window: ping-pong messages in flight per stream
	zeroRTT      bool           // --0rtt: -p h3's requests in 0-RTT on resumed sessions
	targets      string         // --targets: a request mix's file
	mix          *mix.Mix       // read from it
	feed         string         // --feed: a CSV of rows for {{row.COLUMN}}
	feedRows     *protocol.Feed // read from it
	check        checkFlags
	abort        abortFlags
	tls          tlsFlags
	ui           uiFlags // --ui: the live dashboard
	script       string  // -s: wrk's Lua script, refused with what to use instead
	file         runFile // -f: an options file, and the target
	labels       results.Labels
}

func newRunCmd() *cobra.Command {
	f := &runFlags{}
	cmd := &cobra.Command{
		Use:   "run [flags] URL | --targets FILE",
		Short: "Drive load at one target and report latency, throughput and errors",
		Long: `Drive load at one target, closed loop like wrk or open loop like wrk2, and
print wrk's summary (so scripts written for wrk parse it), then what wrk lacks.

Closed loop (no -R): each connection sends its next request as soon as the
last one is answered. Open loop (-R): requests are scheduled at the asked rate
whatever the target does; latency counts from each request's intended start
(coordinated-omission corrected, like wrk2) and the uncorrected figure is
printed too. Requests that could not start on time are counted, never dropped.

Threads, in Go terms: -t groups the connections into threads for wrk's
"Thread Stats" and caps the OS threads running Go code (GOMAXPROCS) at
min(-t, CPUs, CPU quota), so -t 1 uses one core like wrk -t 1, and
-c 128 -t 128 works on a 2-core machine. Where it can (HTTP/1.1, HTTP/2 and
gRPC calls and streams, with or without TLS, and raw TCP on Linux), an event loop
per thread drives its share of the connections, as wrk's threads do: no
goroutine per connection. Otherwise, or with --driver goroutines, every
connection (every stream, with -m) is its own goroutine. A run on event
loops has one P more, idle but for the reporter and signals: each loop waits
for events holding its own, as wrk's thread does.

Exit status, of every command that runs load or judges results:
  0    all good: every run ran, every --assert held, nothing regressed
  1    a run failed: the target unreachable or it stopped answering, no request
       succeeded, more failed than --max-errors, a result not written
  2    the command line was wrong: nothing ran
  98   not decidable: worse than --max-regression, but within what contention
       on a busy machine can explain (--allow-contended: 0)
  99   an --assert did not hold, or a figure regressed past --baseline
  108  --abort-on-fail stopped the run: an --assert broke while it ran
  130  Ctrl-C; 143 SIGTERM`,
		Example: `  loadgen serve httpbin --addr 127.0.0.1:8080 &
  loadgen run -c 50 -t 2 -d 10s http://127.0.0.1:8080/bytes/1024
  loadgen run -c 50 -t 2 -d 30s --targets targets.txt   # vegeta's format, '# name=N weight=W'
  loadgen run -c 50 -d 30s --feed users.csv -H 'X-Request-Id: {{uuid}}' \
      'http://127.0.0.1:8080/anything/{{row.user}}?seq={{seq}}'   # {{rand N}} {{now}} too
  loadgen run -c 50 -t 2 -d 30s -R 20000 --latency --json out.json http://127.0.0.1:8080/get
  loadgen run -n 1000 -m POST --body '{"a":1}' -H 'Content-Type: application/json' \
      http://127.0.0.1:8080/post`,
		Args: cobra.ArbitraryArgs, // checked with -f's url (the file, then the environment, are read first)
		PreRunE: func(cmd *cobra.Command, args []string) error {
			return f.file.apply(cmd, f, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLoad(cmd, f, f.file.url)
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	f.connections = 10
	fl.VarP(connsValue{&f.connections, &f.connSchedule}, "connections", "c", "connections to keep open (SI suffixes: 1k); or, closed loop, a schedule of how many send, ramps and holds that end with the last, e.g. 10-200/1m,200/2m (-d: their total; the peak's connections open at the start, on goroutines)")
	countVarP(fl, &f.threads, "threads", "t", 2, "threads: groups of connections for stats; caps GOMAXPROCS at min(t, CPUs, CPU quota)")
	durationVarP(fl, &f.duration, "duration", "d", 10*time.Second, "duration of the measured window (10s, 2m30s, or plain seconds)")
	fl.VarP(count64Value{&f.requests}, "requests", "n", "stop after this many requests, e.g. 10k (with -d: whichever comes first)")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "add a request header 'Name: value' (repeatable)")
	durationVarP(fl, &f.timeout, "timeout", "", loadgen.DefaultTimeout, "per-request timeout, a hard bound; a timed-out request counts in the latency at its timeout and closes its connection")
	fl.BoolVar(&f.latency, "latency", false, "print the latency distribution as wrk --latency does (50, 75, 90, 99%); with -R as wrk2 --latency does: -L's report")
	fl.BoolVarP(&f.spectrum, "spectrum", "L", false, "print wrk2's latency report (wrk2 -L): the HdrHistogram Latency Distribution (50 … 100%) and the Detailed Percentile spectrum, in the layout HdrHistogram's plotter reads")
	fl.BoolVarP(&f.uncorrected, "uncorrected", "U", false, "with -R: -L's report, then the same of the uncorrected latency, from each request's actual send (wrk2 -U)")
	fl.StringVar(&f.percentiles, "percentiles", "50,90,95,99,99.9,99.99", "the latency percentiles loadgen's summary prints, e.g. 50,75,99.5 (fortio's -p); any other than p50, p75, p90, p95, p99, p99.9 and p99.99 is read from the run's histogram")
	fl.StringVarP(&f.method, "method", "m", "", "HTTP method (default GET, or POST with a body); a number means --streams (h2load's -m)")
	countVarP(fl, &f.streams, "streams", "", 0, "concurrent streams per connection (h2, grpc)")
	fl.StringVar(&f.body, "body", "", "request body")
	fl.StringVar(&f.bodyFile, "body-file", "", "read the request body from a file")
	fl.StringVar(&f.targets, "targets", "", "a request mix: the requests in vegeta's targets format (METHOD URL, headers, @body-file; or one JSON object a line; - reads stdin), each named and weighted by a '# name=N weight=W' line before it")
	fl.StringVar(&f.feed, "feed", "", "a CSV file (a header line naming the columns, then rows) whose rows {{row.COLUMN}} fields take, one row per request, in order, starting again after the last (-p http1, h2, h2c)")
	durationVarP(fl, &f.warmup, "warmup", "", 0, "load sent before the measured window, excluded from results, e.g. 5s (default none)")
	fl.StringVarP(&f.rate, "rate", "R", "", "open loop: requests/s in total, e.g. 2000 or 1.5k; or stages, ramps and holds that end with the last, e.g. 0-2k/30s,2k/2m,2k-0/10s (-d: their total), or @FILE of them one per line; or ramp:100-5k/30s, step:1k+500/5s (then held)")
	f.arrival.register(fl)
	durationVarP(fl, &f.slack, "slack", "", loadgen.DefaultSlack, "open loop on event loops: requests due within this of the next one share its wake-up, each started up to this late (counted in its latency); 0: each wakes its loop when due")
	fl.StringVar(&f.jsonOut, "json", "", "write the result as versioned JSON to this file (atomically; - for stdout, the summary then goes to stderr)")
	fl.StringVar(&f.hlog, "hlog", "", "write an HdrHistogram interval log (1 s intervals) to this file (- for stdout)")
	fl.StringVarP(&f.protocol, "protocol", "p", "", "protocol (default http1): "+strings.Join(client.Described(), "; "))
	bytesVar(fl, &f.size, "size", 0, "payload bytes for grpc and tcp protocols, e.g. 100, 1KiB, 64k (default: tcp 1024, grpc an empty message)")
	fl.BoolVar(&f.health, "health", false, "-p grpc: call grpc.health.v1.Health/Check (any gRPC server) instead of loadgen's echo")
	fl.StringVar(&f.call, "call", "", "-p grpc, grpc-stream, grpc-server-stream, grpc-client-stream: call this method of any server, pkg.Service/Method (types by server reflection, --protoset or --proto)")
	fl.StringVar(&f.data, "data", "", "with --call: the request message as JSON (@FILE reads it from a file); default {}")
	fl.StringVar(&f.protoset, "protoset", "", "with --call: a FileDescriptorSet (protoc --descriptor_set_out) instead of server reflection")
	fl.StringArrayVar(&f.proto, "proto", nil, "with --call: a .proto file to parse for the method's types instead of server reflection (repeatable)")
	fl.StringArrayVarP(&f.importPaths, "import-path", "I", nil, "with --proto: a directory to search for its imports, as protoc -I (repeatable; then the file's own directory)")
	countVarP(fl, &f.window, "window", "", 0, "-p grpc-stream: messages in flight on each stream, pipelined (default 1, the ping-pong); runs on grpc-go's client")
	countVarP(fl, &f.messages, "messages", "", 0, "-p grpc-client-stream: messages each call sends; -p grpc-server-stream: messages each call asks the echo target for (default 10)")
	fl.BoolVar(&f.zeroRTT, "0rtt", false, "-p h3: send GET and HEAD requests in 0-RTT on resumed sessions (implies --tls-resume; off by default: a request in 0-RTT can be replayed)")
	fl.BoolVar(&f.newConn, "new-conn", false, "open a new connection for every request (TLS handshakes/s); its latency then includes the connect and handshake, on purpose")
	fl.StringVar(&f.client, "client", "loadgen", "the client library: loadgen (lean, allocation-free), or the reference x-net (h2, h2c) or grpc-go (grpc, grpc-stream)")
	fl.StringVar(&f.netns, "netns", "", "send from this network namespace (a name from ip netns list; needs root)")
	fl.IntVar(&f.cpus, "cpus", 0, "processors (GOMAXPROCS) for the generator's threads (default min(-t, CPUs, the cgroup's CPU quota)); a run on event loops adds one spare")
	fl.StringVar(&f.driver, "driver", "", "what sends the requests: loop (event loops, as wrk and h2load: HTTP/1.1, HTTP/2 and gRPC calls and streams with or without TLS, raw TCP) or goroutines (any protocol); default the loop where it can")
	fl.StringVar(&f.prometheus, "prometheus", "", "serve live metrics in the Prometheus text format on ADDR/metrics while the load runs, e.g. 127.0.0.1:9464")
	durationVarP(fl, &f.promHold, "prometheus-hold", "", 0, "with --prometheus: keep serving the final figures this long after the run, for a last scrape, e.g. 15s")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress line on a terminal")
	f.ui.register(fl, "run")
	fl.StringVarP(&f.script, "script", "s", "", "wrk's Lua script: not supported (see --targets)")
	fl.MarkHidden("script")
	fl.StringVar(&f.okStatus, "ok-status", "", "HTTP statuses that count as a success, any other an error (class status): 2xx, 200,204 or 200-299,404 (default: every status below 400, as wrk)")
	fl.StringVar(&f.maxErrors, "max-errors", compare.DefaultErrorBudget, "exit status 1 when more requests than this failed: a share (10%) or a count (100); 100% turns it off (a run where nothing succeeded fails anyway)")
	f.tls.register(fl)
	f.check.register(fl)
	f.abort.register(fl, false)
	f.file.register(cmd)
	labelFlag(fl, &f.labels)
	return cmd
}

// wrkOptions are the parts of wrk's summary the flags ask for. --latency
// is wrk's and wrk2's flag: wrk, which has no -R, prints its 4-line list;
// wrk2, which always has -R, prints what -L prints.
func (f *runFlags) wrkOptions() report.WrkOptions {
	open := f.rate != ""
	return report.WrkOptions{
		Latency:     f.latency && !open,
		Spectrum:    f.spectrum || (f.latency && open),
		Uncorrected: f.uncorrected,
		Percentiles: f.pcts,
	}
}

// config turns the flags into the engine's configuration.
func (f *runFlags) config(cmd *cobra.Command, target string) (c loadgen.Config, err error) {
	if f.connections < 1 {
		return c, fmt.Errorf("-c must be at least 1, got %d", f.connections)
	}
	if !cmd.Flags().Changed("threads") && f.threads > f.connections {
		f.threads = f.connections
	}
	if f.threads < 1 {
		return c, fmt.Errorf("-t must be at least 1, got %d", f.threads)
	}
	if f.threads > f.connections {
		return c, fmt.Errorf("-t %d is more than -c %d: every thread needs at least one connection", f.threads, f.connections)
	}
	d := f.duration
	if cmd.Flags().Changed("requests") && !cmd.Flags().Changed("duration") {
		d = 0 // -n alone: run until n requests
	}
	if f.requests < 0 {
		return c, fmt.Errorf("-n must not be negative, got %d", f.requests)
	}
	if f.timeout <= 0 {
		return c, fmt.Errorf("--timeout must be positive, got %v", f.timeout)
	}
	if f.warmup < 0 {
		return c, fmt.Errorf("--warmup must not be negative, got %v", f.warmup)
	}
	if n, err := strconv.Atoi(f.method); err == nil {
		if cmd.Flags().Changed("streams") {
			return c, fmt.Errorf("-m %d and --streams both set the streams per connection: use one", n)
		}
		f.streams, f.method = n, ""
	}
	if f.streams < 0 {
		return c, fmt.Errorf("--streams must be at least 1, got %d", f.streams)
	}
	if f.body != "" && f.bodyFile != "" {
		return c, fmt.Errorf("--body and --body-file both set the body: use one")
	}
	if f.cpus < 0 {
		return c, fmt.Errorf("--cpus must not be negative, got %d", f.cpus)
	}
	c.Target = target
	c.Driver = f.driver
	c.Connections = f.connections
	c.Threads = f.threads
	c.Duration = results.Duration(d)
	c.Requests = f.requests
	c.Warmup = results.Duration(f.warmup)
	c.Timeout = results.Duration(f.timeout)
	c.NewConn = f.newConn
	c.Headers = f.headers
	c.Streams = f.streams
	c.Size = f.size
	c.Labels = f.labels
	c.Slack = f.slack
	if f.slack == 0 {
		c.Slack = -1 // none
	}
	if f.slack < 0 {
		return c, fmt.Errorf("--slack must not be negative, got %v", f.slack)
	}
	if f.rate != "" {
		spec, err := readStages(f.rate)
		if err != nil {
			return c, err
		}
		p, err := pace.Parse(spec)
		if err != nil {
			return c, fmt.Errorf("-R: %w", err)
		}
		c.Pacer = p
		if st, ok := p.(*pace.Stages); ok {
			w, err := st.Window(f.warmup, f.duration, cmd.Flags().Changed("duration"))
			if err != nil {
				return c, err
			}
			c.Duration = results.Duration(w)
		}
	}
	if c.Pacer, err = f.arrival.apply(c.Pacer, "-R"); err != nil {
		return c, err
	}
	if f.connSchedule != "" {
		p, err := pace.Parse(f.connSchedule)
		st, staged := p.(*pace.Stages)
		if err != nil || !staged {
			return c, fmt.Errorf("-c %s: want a count, or stages of counts (10-200/1m,200/2m): %v", f.connSchedule, err)
		}
		if f.rate != "" {
			return c, fmt.Errorf("-c %s is a closed loop's connection schedule: not with -R (an open loop's stages go in -R)", f.connSchedule)
		}
		w, err := st.Window(f.warmup, f.duration, cmd.Flags().Changed("duration"))
		if err != nil {
			return c, err
		}
		c.Duration, c.ConnSchedule = results.Duration(w), st
	}
	if f.uncorrected && f.rate == "" {
		return c, fmt.Errorf("-U prints the uncorrected latency of an open-loop run: add -R (without it each latency counts from its actual send already, and -L prints it)")
	}
	if f.newConn && f.streams > 1 {
		return c, fmt.Errorf("--new-conn opens a connection (a TLS handshake) per request, and -m %d shares one connection between %d streams: use one of them", f.streams, f.streams)
	}
	return c, c.Validate()
}

func runLoad(cmd *cobra.Command, f *runFlags, target string) (err error) {
	ctx := cmd.Context()
	if cmd.Flags().Changed("script") {
		return fmt.Errorf("-s %s: loadgen runs no Lua scripts (wrk -s): give the requests with --targets FILE "+
			"(vegeta's format, per request: METHOD URL, headers, @body), or one request with -m, -H and --body or --body-file", f.script)
	}
	if target, err = runTarget(f.protocol, target); err != nil {
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
		if _, unreachable := err.(runFailure); unreachable && ctx.Err() != nil {
			return f.interruptedBeforeStart(stderr, cfg.Target)
		}
		return err
	}
	if cfg.Driver == loadgen.DriverLoop && !loadgen.SpareP(cfg, dialer) {
		closeDialer(dialer)
		return loopCannot(f, cfg) // before the header: Run would refuse it after
	}
	if err := loadgen.CheckFiles(cfg, dialer); err != nil {
		closeDialer(dialer)
		return err // over the file descriptor limit: before the header too
	}
	defer runtime.GOMAXPROCS(setProcs(&cfg, dialer, f.threads, f.cpus))

	var hlog *hlogFile
	if f.hlog != "" {
		if hlog, err = createHlog(f.hlog, stdout); err != nil {
			closeDialer(dialer)
			return fmt.Errorf("--hlog: %w", err)
		}
		defer hlog.discard() // unless committed: an existing file stays as it was
		cfg.HistLog = hlog.w
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
			// Ctrl-C before or during the hold ends it: exit 130, unless a
			// result could not be written (exit 1 says so first).
			if _, failed := err.(runFailure); ran && !holdMetrics(ctx, f.promHold, stderr, url) && !failed {
				err = exitError{code: exitInterrupted}
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
		if ctx.Err() != nil {
			// Ctrl-C while connecting: the dial's error is the interrupt's,
			// not the target's.
			return f.interruptedBeforeStart(stderr, cfg.Target)
		}
		if hint := f.certHint(ctx, cfg.Target, cfg.TLS); hint != "" && !strings.Contains(err.Error(), "--cert") {
			err = fmt.Errorf("%w; %s", err, hint)
		}
		if jerr := f.check.noRun(cfg.Target, f.labels, err); jerr != nil {
			fmt.Fprintf(stderr, "loadgen: %v\n", jerr)
		}
		return runFailure{err: err}
	}
	ran = true
	if live != nil {
		live.Finish(errorsByClass(run.Summary.Errors), run.Summary.RPS)
	}
	if err := report.WrkBody(summary, run, f.wrkOptions()); err != nil {
		return runFailure{err: err}
	}
	var failures []string
	if hlog != nil {
		if err := hlog.commit(); err != nil {
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
	why := "interrupted before the end of its window"
	switch {
	case run.Aborted != "":
		why = run.Aborted // --abort-on-fail: JUnit's run case fails with it
	case !run.Interrupted:
		why = compare.RunVerdict(run, f.budget)
	}
	checked, err := f.check.checkRun(summary, run, why)
	if err != nil {
		failures = append(failures, err.Error())
	}
	if len(failures) > 0 {
		return failf("%s", strings.Join(failures, "; "))
	}
	if run.Aborted != "" {
		fmt.Fprintf(stderr, "loadgen: %s; %s\n", run.Aborted, discarded(run.Summary.InFlight))
		return exitError{code: exitAborted}
	}
	if run.Interrupted {
		fmt.Fprintf(stderr, "loadgen: interrupted: %s\n", discarded(run.Summary.InFlight))
		return exitError{code: exitInterrupted}
	}
	if why != "" {
		fmt.Fprintf(stderr, "loadgen: the run failed: %s\n", why)
		if hint := f.hint(ctx, run); hint != "" {
			fmt.Fprint(stderr, wrap("loadgen: "+hint, maxWidth, "  "))
		}
		return exitError{code: exitFail}
	}
	return exitWith(checked)
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

// hint says, after a run that failed, what the target looks like when it
// is not what the protocol expects (client.Hint), looked at from here: not
// for a run sent from another network namespace.
func (f *runFlags) hint(ctx context.Context, run *results.Run) string {
	if hint := f.certHint(ctx, run.Config.Target, run.Config.TLS); hint != "" {
		return hint
	}
	if f.netns != "" || f.targets != "" {
		return ""
	}
	return client.Hint(ctx, f.protocol, run.Config.Target, run.Summary.Errors)
}

// certHint says whether the server wants a client certificate the run
// did not give, or refuses the one it gave (client.CertHint), looked at
// from the run's network namespace.
func (f *runFlags) certHint(ctx context.Context, target string, tlsOn bool) string {
	t, err := f.tls.options()
	if err != nil || ctx.Err() != nil {
		return ""
	}
	t.Enabled = tlsOn
	return client.CertHint(ctx, target, t, f.netns)
}

// interruptedBeforeStart ends a run that Ctrl-C stopped before its load
// started (while it connected): status 130 and a line saying so, since the
// error the connect returned blames a target that did nothing wrong. A
// --junit report says the same.
func (f *runFlags) interruptedBeforeStart(stderr io.Writer, target string) error {
	why := "interrupted before the load started, while connecting to " + target + ": nothing was measured"
	if jerr := f.check.noRun(target, f.labels, errors.New(why)); jerr != nil {
		fmt.Fprintf(stderr, "loadgen: %v\n", jerr)
	}
	fmt.Fprintf(stderr, "loadgen: %s\n", why)
	return exitError{code: exitInterrupted}
}

// checkOutputs checks, before any load, the run's output files
// (checkOutputs) and tells whether one goes to standard output.
func (f *runFlags) checkOutputs() (toStdout bool, err error) {
	return checkOutputs(output{"--json", f.jsonOut}, output{"--hlog", f.hlog}, output{"--junit", f.check.junit})
}

// hlogFile is --hlog's file, created (or emptied) at the log's first
// write, once the clock has started: a run that fails before its start
// leaves an existing file as it was, and a run killed midway leaves the
// intervals written so far, as it always did.
type hlogFile struct {
	path   string
	f      io.WriteCloser
	err    error
	w      *bufio.Writer
	stdout io.Writer // --hlog -
}

func createHlog(path string, stdout io.Writer) (*hlogFile, error) {
	h := &hlogFile{path: path, stdout: stdout}
	h.w = bufio.NewWriter(h)
	return h, nil
}

func (h *hlogFile) Write(p []byte) (int, error) {
	if isStdout(h.path) {
		return h.stdout.Write(p)
	}
	if h.f == nil && h.err == nil {
		h.f, h.err = store.Create(h.path) // a FIFO written, never opened read-write to fill unread
	}
	if h.err != nil {
		return 0, h.err
	}
	return h.f.Write(p)
}

// commit writes what is buffered and closes the file.
func (h *hlogFile) commit() error {
	err := h.w.Flush()
	if h.f != nil {
		if cerr := h.f.Close(); err == nil {
			err = cerr
		}
		h.f = nil
	}
	return err
}

// discard closes the file, if the log began, without the buffered rest.
func (h *hlogFile) discard() {
	if h.f != nil {
		h.f.Close()
		h.f = nil
	}
}

// setProcs gives a run its processors (loadgen.Procs, from this machine's
// CPUs and cgroup quota) and sets GOMAXPROCS as loadgen.MaxProcs says. It
// returns the GOMAXPROCS before.
func setProcs(cfg *loadgen.Config, d protocol.Dialer, threads, cpus int) (prev int) {
	quota, ok := cost.CPUQuota()
	if !ok {
		quota = 0
	}
	cfg.Procs = loadgen.Procs(threads, cpus, runtime.NumCPU(), quota)
	return runtime.GOMAXPROCS(loadgen.MaxProcs(*cfg, d))
}

// readTargets reads --targets, a request mix, if given.
func (f *runFlags) readTargets(stdin io.Reader) error {
	if f.targets == "" {
		return nil
	}
	if f.body != "" || f.bodyFile != "" || f.method != "" {
		return fmt.Errorf("--targets gives each request its method and body: leave out -m, --body and --body-file")
	}
	var err error
	if f.targets == "-" {
		src, rerr := io.ReadAll(stdin)
		if rerr != nil {
			return fmt.Errorf("--targets: %w", rerr)
		}
		f.mix, err = mix.Parse("stdin", src, os.ReadFile)
	} else {
		f.mix, err = mix.Load(f.targets)
	}
	if err != nil {
		return err
	}
	return f.mix.CheckFields(f.feedRows)
}

// readFeed reads --feed, the CSV rows of {{row.COLUMN}}, if given.
func (f *runFlags) readFeed() error {
	if f.feed == "" {
		return nil
	}
	src, err := os.ReadFile(f.feed)
	if err != nil {
		return fmt.Errorf("--feed: %w", err)
	}
	f.feedRows, err = protocol.ParseFeed(f.feed, src)
	if err != nil {
		return fmt.Errorf("--feed %w", err)
	}
	return nil
}

func (f *runFlags) readBody() ([]byte, error) {
	if f.bodyFile != "" {
		b, err := os.ReadFile(f.bodyFile)
		if err != nil {
			return nil, fmt.Errorf("--body-file: %w", err)
		}
		return b, nil
	}
	if f.body != "" {
		return []byte(f.body), nil
	}
	return nil, nil
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

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// readStages reads -R @FILE: stages one per line (blank lines and # comments
// skipped), as one comma-separated spec. Any other -R is the spec itself.
func readStages(rate string) (string, error) {
	name, ok := strings.CutPrefix(rate, "@")
	if !ok {
		return rate, nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return "", fmt.Errorf("-R @%s: %w", name, errors.Unwrap(err))
	}
	var stages []string
	for _, line := range strings.Split(string(b), "\n") {
		line, _, _ = strings.Cut(line, "#")
		if line = strings.TrimSpace(line); line != "" {
			stages = append(stages, line)
		}
	}
	if len(stages) == 0 {
		return "", fmt.Errorf("-R @%s: no stages in the file", name)
	}
	return strings.Join(stages, ","), nil
}

// connsValue is -c: a count of connections, or a closed loop's connection
// schedule (stages of counts), whose peak is then the count.
type connsValue struct {
	n     *int
	sched *string
}

func (v connsValue) Set(s string) error {
	if !strings.Contains(s, "/") {
		*v.sched = ""
		return countValue{v.n}.Set(s)
	}
	p, err := pace.Parse(s)
	if err != nil {
		return err
	}
	st, ok := p.(*pace.Stages)
	if !ok {
		return fmt.Errorf("%q: want a count or stages of counts, e.g. 10-200/1m,200/2m", s)
	}
	peak := 0.0
	for _, x := range st.List() {
		if x.From != math.Trunc(x.From) || x.To != math.Trunc(x.To) {
			return fmt.Errorf("%q: connection counts are whole numbers", s)
		}
		peak = max(peak, x.From, x.To)
	}
	if peak > loadgen.MaxConnections {
		return fmt.Errorf("%q: at most %d connections", s, loadgen.MaxConnections)
	}
	*v.n, *v.sched = int(peak), s
	return nil
}

func (v connsValue) String() string {
	if *v.sched != "" {
		return *v.sched
	}
	return itoaInt(*v.n)
}

func (v connsValue) Type() string { return "count" }
