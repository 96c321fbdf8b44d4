package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"loadgen/loadgen"
	"loadgen/loadgen/client"
	"loadgen/loadgen/mix"
	"loadgen/loadgen/pace"
	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/rpc"
	"loadgen/loadgen/protocol/tcp"
	"loadgen/results"
	"loadgen/results/compare"
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

` + exitHelp,
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
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "add a request header 'Name: value', e.g. 'Accept: application/json' (repeatable)")
	durationVarP(fl, &f.timeout, "timeout", "", loadgen.DefaultTimeout, "per-request timeout, a hard bound; a timed-out request counts in the latency at its timeout and closes its connection")
	fl.BoolVar(&f.latency, "latency", false, "print the latency distribution as wrk --latency does (50, 75, 90, 99%); with -R as wrk2 --latency does: -L's report")
	fl.BoolVarP(&f.spectrum, "spectrum", "L", false, "print wrk2's latency report (wrk2 -L): the HdrHistogram Latency Distribution (50 … 100%) and the Detailed Percentile spectrum, in the layout HdrHistogram's plotter reads")
	fl.BoolVarP(&f.uncorrected, "uncorrected", "U", false, "with -R: -L's report, then the same of the uncorrected latency, from each request's actual send (wrk2 -U)")
	fl.StringVar(&f.percentiles, "percentiles", results.FormatPercentiles(results.DefaultPercentiles), "the latency percentiles loadgen's summary prints, e.g. 50,75,99.5 (fortio's -p); any other than "+summaryPercentiles()+" is read from the run's histogram")
	fl.StringVarP(&f.method, "method", "m", "", "HTTP method (default GET, or POST with a body); a number means --streams (h2load's -m)")
	countVarP(fl, &f.streams, "streams", "", 0, "concurrent streams per connection (h2, grpc), e.g. 100 (default 1)")
	fl.StringVar(&f.body, "body", "", "request body, e.g. '{\"a\":1}' (default none; a body makes the method POST)")
	fl.StringVar(&f.bodyFile, "body-file", "", "read the request body from a file, e.g. body.json (as --body)")
	fl.StringVar(&f.targets, "targets", "", "a request mix, e.g. mix.txt: the requests in vegeta's targets format (METHOD URL, headers, @body-file; or one JSON object a line; - reads stdin), each named and weighted by a '# name=N weight=W' line before it")
	fl.StringVar(&f.feed, "feed", "", "a CSV file, e.g. users.csv (a header line naming the columns, then rows) whose rows {{row.COLUMN}} fields take, one row per request, in order, starting again after the last (-p http1, h2, h2c)")
	durationVarP(fl, &f.warmup, "warmup", "", 0, "load sent before the measured window, excluded from results, e.g. 5s (default none)")
	fl.StringVarP(&f.rate, "rate", "R", "", "open loop: requests/s in total, e.g. 2000 or 1.5k; or stages, ramps and holds that end with the last, e.g. 0-2k/30s,2k/2m,2k-0/10s (-d: their total), or @FILE of them one per line; or ramp:100-5k/30s, step:1k+500/5s (then held)")
	f.arrival.register(fl)
	durationVarP(fl, &f.slack, "slack", "", loadgen.DefaultSlack, "open loop on event loops: requests due within this of the next one share its wake-up, each started up to this late (counted in its latency); 0: each wakes its loop when due")
	fl.StringVar(&f.jsonOut, "json", "", "write the result as versioned JSON to this file, e.g. run.json (atomically; - for stdout, the summary then goes to stderr)")
	fl.StringVar(&f.hlog, "hlog", "", "write an HdrHistogram interval log ("+strconv.FormatFloat(loadgen.DefaultInterval.Seconds(), 'g', -1, 64)+" s intervals) to this file, e.g. run.hlog (- for stdout)")
	fl.StringVarP(&f.protocol, "protocol", "p", "", "protocol (default http1): "+strings.Join(client.Described(), "; "))
	bytesVar(fl, &f.size, "size", 0, "payload bytes for grpc and tcp protocols, e.g. 100, 1KiB, 64k (default: tcp "+strconv.Itoa(tcp.DefaultSize)+", grpc an empty message)")
	fl.BoolVar(&f.health, "health", false, "-p grpc: call grpc.health.v1.Health/Check (any gRPC server) instead of loadgen's echo")
	fl.StringVar(&f.call, "call", "", "-p grpc, grpc-stream, grpc-server-stream, grpc-client-stream: call this method of any server, pkg.Service/Method, e.g. helloworld.Greeter/SayHello (types by server reflection, --protoset or --proto)")
	fl.StringVar(&f.data, "data", "", "with --call: the request message as JSON (@FILE reads it from a file); default {}")
	fl.StringVar(&f.protoset, "protoset", "", "with --call: a FileDescriptorSet (protoc --descriptor_set_out), e.g. api.protoset, instead of server reflection")
	fl.StringArrayVar(&f.proto, "proto", nil, "with --call: a .proto file to parse for the method's types, e.g. api.proto, instead of server reflection (repeatable)")
	fl.StringArrayVarP(&f.importPaths, "import-path", "I", nil, "with --proto: a directory to search for its imports, as protoc -I, e.g. ./protos (repeatable; then, and by default, the file's own directory)")
	countVarP(fl, &f.window, "window", "", 0, "-p grpc-stream: messages in flight on each stream, pipelined (default 1, the ping-pong); runs on grpc-go's client")
	countVarP(fl, &f.messages, "messages", "", 0, "-p grpc-client-stream: messages each call sends; -p grpc-server-stream: messages each call asks the echo target for (default "+strconv.Itoa(rpc.DefaultMessages)+")")
	fl.BoolVar(&f.zeroRTT, "0rtt", false, "-p h3: send GET and HEAD requests in 0-RTT on resumed sessions (implies --tls-resume; off by default: a request in 0-RTT can be replayed)")
	fl.BoolVar(&f.newConn, "new-conn", false, "open a new connection for every request (TLS handshakes/s); its latency then includes the connect and handshake, on purpose")
	fl.StringVar(&f.client, "client", "loadgen", "the client library: loadgen (lean, allocation-free), or the reference x-net (h2, h2c) or grpc-go (grpc, grpc-stream)")
	fl.StringVar(&f.netns, "netns", "", "send from this network namespace, e.g. lab-pod1 (a name from ip netns list; needs root; default loadgen's own)")
	fl.IntVar(&f.cpus, "cpus", 0, "processors (GOMAXPROCS) for the generator's threads (default min(-t, CPUs, the cgroup's CPU quota)); a run on event loops adds one spare")
	fl.StringVar(&f.driver, "driver", "", "what sends the requests: loop (event loops, as wrk and h2load: HTTP/1.1, HTTP/2 and gRPC calls and streams with or without TLS, raw TCP) or goroutines (any protocol); default the loop where it can")
	fl.StringVar(&f.prometheus, "prometheus", "", "serve live metrics in the Prometheus text format on ADDR/metrics while the load runs, e.g. 127.0.0.1:9464")
	durationVarP(fl, &f.promHold, "prometheus-hold", "", 0, "with --prometheus: keep serving the final figures this long after the run, for a last scrape, e.g. 15s")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress line on a terminal")
	f.ui.register(fl, "run")
	fl.StringVarP(&f.script, "script", "s", "", "wrk's Lua script: not supported (see --targets)")
	fl.MarkHidden("script")
	fl.StringVar(&f.okStatus, "ok-status", "", "HTTP statuses that count as a success, any other an error (class status): 2xx, 200,204 or 200-299,404 (default: every status below 400, as wrk)")
	fl.StringVar(&f.maxErrors, "max-errors", compare.DefaultErrorBudget, fmt.Sprintf("exit status %d when more requests than this failed: a share (10%%) or a count (100); 100%% turns it off (a run where nothing succeeded fails anyway)", compare.Failed))
	f.tls.register(fl)
	f.check.register(fl)
	f.abort.register(fl, false)
	f.file.register(cmd)
	labelFlag(fl, &f.labels)
	return cmd
}

// connsValue is -c: a count of connections, or a closed loop's connection
// schedule (stages of counts), whose peak is then the count
// (pace.ParseConns).
type connsValue struct {
	n     *int
	sched *string
}

func (v connsValue) Set(s string) error {
	n, sched, err := pace.ParseConns(s, loadgen.MaxConnections)
	if err != nil {
		return err
	}
	*v.n, *v.sched = n, sched
	return nil
}

func (v connsValue) String() string {
	if *v.sched != "" {
		return *v.sched
	}
	return itoaInt(*v.n)
}

func (v connsValue) Type() string { return "count" }

// summaryPercentiles names the percentiles a run's summary holds:
// "p50, p75, … and p99.99".
func summaryPercentiles() string {
	var names []string
	for _, p := range results.SummaryPercentiles {
		names = append(names, results.PercentileName(p))
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
