package loadgen

import (
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strconv"
	"time"

	"loadgen/loadgen/pace"
	"loadgen/results"
	"loadgen/results/cost"
	"loadgen/results/hist"
)

// Config is one run of the engine. The embedded results.Config is both what
// the engine obeys (connections, threads, duration, rate …) and what it
// records in the result, so there is one source of truth.
type Config struct {
	results.Config

	// Pacer overrides Rate with another open-loop schedule (ramp, step),
	// on an arrival process (pace.WithArrival).
	Pacer pace.Pacer
	// ConnSchedule, when set, is a closed loop's connection schedule (-c
	// '10-200/1m,200/2m', k6's ramping-vus): how many of the Connections
	// send at each moment from the start of the load, the rest idle on
	// their open connections; the load ends with it. Goroutines drive it.
	ConnSchedule *pace.Stages
	// Mix, when set, is a request mix (loadgen run --targets): which of
	// the Dialer's requests each request sends, and the statistics by
	// name (requestmix.go).
	Mix *Mix
	// Interval is how often interval histograms are cut for HistLog and
	// Progress is called. Default 1 s.
	Interval time.Duration
	// HistLog, when set, receives an HdrHistogram interval log.
	HistLog io.Writer
	// Progress, when set, is called every Interval from the engine's
	// reporting goroutine (never from a worker).
	Progress func(Progress)
	// LiveLatency gives Progress the interval's latency histogram (live
	// metrics): interval histograms are then cut even without HistLog.
	LiveLatency bool
	// Window, when set, is called once before the load starts with the
	// planned measured window (end is zero for a run bounded by -n only),
	// so resource samplers can cover exactly that window.
	Window func(start, end time.Time)
	// CPUQuota is the generator's CPU limit in cores, against which its
	// saturation is judged: 0 reads this process's cgroup quota (a pod's
	// limits.cpu), a negative value means none.
	CPUQuota float64
	// Judge (--abort-on-fail) is called on the reporting goroutine after each
	// measured interval from JudgeAfter on, with the last JudgeWindow: a reason
	// stops the run as an interrupt does, and the result's Aborted says it.
	Judge func(Window) string
	// JudgeWindow is how much of the run's end Judge sees, in whole
	// intervals: DefaultJudgeWindow (3 s) when 0.
	JudgeWindow time.Duration
	// JudgeAfter is how far into the measured window Judge is first asked;
	// never before a whole JudgeWindow was measured.
	JudgeAfter time.Duration
	// Procs is how many processors (Ps) the generator may use: its event
	// loops (at most one per P) and the CPUs its cost is judged against.
	// 0: GOMAXPROCS. SpareP says when to give a run one P more.
	Procs int
	// Slack is how late an open-loop request may start so that the requests
	// due within it share one wake-up of their event loop (its latency counts
	// the wait). 0: DefaultSlack; negative: none. Goroutines wake on time.
	Slack time.Duration
	// Labels name the run (--label k=v): the result carries them.
	Labels results.Labels
}

// DefaultSlack is Config.Slack's default: at most 1/5 of LateAfter, so
// that a request it delays is never counted late for it.
const DefaultSlack = 200 * time.Microsecond

// maxSlack bounds Config.Slack.
const maxSlack = time.Second

// procs is the run's Procs, GOMAXPROCS unless set.
func (c *Config) procs() int {
	if c.Procs > 0 {
		return c.Procs
	}
	return runtime.GOMAXPROCS(0)
}

// AskedRate is the open-loop rate, in requests/s, the run's schedule asks
// for at `at` into the measured window. The pacer's time starts with the
// load, at the warm-up's start, so the window starts Warmup into it. 0 in
// a closed loop (no Pacer: Normalize sets one from Rate).
func (c *Config) AskedRate(at time.Duration) float64 {
	if c.Pacer == nil {
		return 0
	}
	return c.Pacer.Rate(c.Warmup.D() + at)
}

// Progress is a live view of a run, for progress bars.
type Progress struct {
	Elapsed  time.Duration // since the start of the measured window (negative during warm-up)
	Total    time.Duration // planned measured duration (0 with -n only)
	Requests int64         // responses so far in the measured window
	RPS      float64       // over the last interval
	Errors   int64
	// Latency is the interval's latencies, every request (with
	// Config.LiveLatency): valid only during the call.
	Latency *hist.Histogram
}

// Drivers (Config.Driver): the event loop where the protocol allows it
// (plain HTTP/1.1, raw TCP), else goroutines; or either, forced.
const (
	DriverAuto       = ""
	DriverLoop       = "loop"
	DriverGoroutines = "goroutines"
)

// Defaults the engine applies to zero fields.
const (
	DefaultTimeout = 2 * time.Second // as wrk
	// ResolveTimeout bounds the lookup of the target's name before a
	// run (retried while it times out); a longer --timeout extends it.
	ResolveTimeout  = 30 * time.Second
	DefaultInterval = time.Second
	MaxConnections  = 1 << 16
)

// Given says which of a run's options a user gave (on a command line, in
// an options file): Normalize's defaults depend on it.
type Given struct {
	Threads  bool // -t: else Threads is at most Connections
	Duration bool // -d: else Requests given alone runs with no duration
	Requests bool // -n
	Streams  bool // --streams: then a numeric Method (-m) is refused
	// Slack is the user's: a flag whose default shows DefaultSlack, so a
	// 0 asks for none. Else 0 is DefaultSlack, as for Run.
	Slack bool
	// Body and BodyFile (--body, --body-file) both set the request body:
	// one at most.
	Body, BodyFile bool
	// Rate is -R as given: a rate, a schedule, or stages (inline or
	// @FILE), which set Pacer and, as stages, Duration.
	Rate string
	// Conns is -c's connection schedule as given (stages), which sets
	// ConnSchedule and Duration.
	Conns string
	// Arrival and Jitter are --arrival and --jitter as given ("" when
	// not): they put the open loop's schedule on an arrival process.
	Arrival, Jitter string
}

// Normalize applies the defaults a run's options take from one another
// where the user left them out, as `loadgen run` reads its flags:
//   - Threads not given is at most Connections (-t 2's default with -c 1
//     is one thread);
//   - Requests given without Duration runs until that count: no duration;
//   - a Method that is a number is the streams per connection (h2load's
//     -m), refused when Streams was given too;
//   - a Slack given must not be negative, and 0 asks for none (-1);
//   - Body and BodyFile exclude each other;
//   - Rate sets Pacer, Conns ConnSchedule, and their stages set Duration:
//     the run lasts as long as its stages, Warmup included (a Duration
//     given must agree).
//   - Arrival and Jitter, each checked, put Pacer (or Rate) on that
//     arrival process (pace.WithArrival, seeded by the clock); a closed
//     loop refuses them, naming the one asked.
//
// It changes only what those rules name; Validate checks the rest.
func (c *Config) Normalize(g Given) error {
	if !g.Threads && c.Threads > c.Connections {
		c.Threads = c.Connections
	}
	if g.Requests && !g.Duration {
		c.Duration = 0 // -n alone: run until n requests
	}
	if n, err := strconv.Atoi(c.Method); err == nil {
		if g.Streams {
			return fmt.Errorf("-m %d and --streams both set the streams per connection: use one", n)
		}
		c.Streams, c.Method = n, ""
	}
	if g.Slack {
		if c.Slack < 0 {
			return fmt.Errorf("--slack must not be negative, got %v", c.Slack)
		}
		if c.Slack == 0 {
			c.Slack = -1 // none
		}
	}
	if g.Body && g.BodyFile {
		return errors.New("--body and --body-file both set the body: use one")
	}
	return c.pace(g)
}

// pace sets Pacer from Given.Rate and ConnSchedule from Given.Conns, and
// Duration from their stages.
func (c *Config) pace(g Given) error {
	if g.Rate != "" {
		spec, err := pace.ReadStages(g.Rate)
		if err != nil {
			return fmt.Errorf("-R %w", err)
		}
		p, err := pace.Parse(spec)
		if err != nil {
			return fmt.Errorf("-R: %w", err)
		}
		c.Pacer = p
		if st, ok := p.(*pace.Stages); ok {
			w, err := st.Window(c.Warmup.D(), c.Duration.D(), g.Duration)
			if err != nil {
				return err
			}
			c.Duration = results.Duration(w)
		}
	}
	if g.Conns != "" {
		st, _, err := pace.ParseConnSchedule(g.Conns, MaxConnections)
		if err != nil {
			return fmt.Errorf("-c: %w", err)
		}
		w, err := st.Window(c.Warmup.D(), c.Duration.D(), g.Duration)
		if err != nil {
			return err
		}
		c.Duration, c.ConnSchedule = results.Duration(w), st
	}
	if g.Arrival != "" || g.Jitter != "" {
		return c.arrive(g.Arrival, g.Jitter)
	}
	return nil
}

// arrive puts the open loop's schedule (Pacer, or Rate's) on the arrival
// process and jitter given (--arrival, --jitter as typed, "" when not).
func (c *Config) arrive(process, jitterPct string) error {
	if process != "" {
		if err := pace.CheckProcess(process); err != nil {
			return fmt.Errorf("--%w", err)
		}
	}
	var jitter float64
	if jitterPct != "" {
		j, err := pace.ParseJitter(jitterPct)
		if err != nil {
			return fmt.Errorf("--jitter: %w", err)
		}
		jitter = j
	}
	base := c.Pacer
	if base == nil && c.Rate > 0 {
		base = pace.Constant{PerSec: c.Rate}
	}
	if base == nil {
		asked := "--arrival"
		if process == "" {
			asked = "--jitter"
		}
		return pace.ClosedLoop(asked, "-R (a rate)")
	}
	p, err := pace.WithArrival(base, process, jitter, pace.ClockSeed())
	if err != nil {
		return fmt.Errorf("--arrival %s --jitter %s: %w", process, jitterPct, err) // poisson with jitter
	}
	c.Pacer = p
	return nil
}

// CheckNewConn refuses a connection per request (NewConn) with several
// streams sharing one connection (Streams > 1): they contradict. It is
// checked on the user's -m, before a --window multiplies Streams, so
// Validate, which Run calls after, does not check it.
func (c *Config) CheckNewConn() error {
	if c.NewConn && c.Streams > 1 {
		return fmt.Errorf("--new-conn opens a connection (a TLS handshake) per request, and -m %d shares one connection between %d streams: use one of them", c.Streams, c.Streams)
	}
	return nil
}

// CheckTimeout refuses a per-request timeout that is not positive, in
// the words of Validate, which refuses a negative one: Validate takes 0 as
// DefaultTimeout, so a CLI whose flag shows that default refuses a 0 the
// user gave with this before.
func CheckTimeout(d time.Duration) error {
	if d > 0 {
		return nil
	}
	return fmt.Errorf("--timeout must be positive, got %v", d)
}

// Validate reports the first thing wrong with c, in words a user can act
// on, naming `loadgen run`'s flags: it is the one check of a run's
// configuration, the CLI's and a sweep step's. Timeout 0 is the default.
func (c *Config) Validate() error {
	switch {
	case c.Connections < 1:
		return fmt.Errorf("-c must be at least 1, got %d", c.Connections)
	case c.Connections > MaxConnections:
		return fmt.Errorf("connections (-c) must be at most %d, got %d", MaxConnections, c.Connections)
	case c.Threads < 1:
		return fmt.Errorf("-t must be at least 1, got %d", c.Threads)
	case c.Threads > c.Connections:
		return fmt.Errorf("-t %d is more than -c %d: every thread needs at least one connection", c.Threads, c.Connections)
	case c.Duration < 0:
		return errors.New("duration (-d) cannot be negative")
	case c.Requests < 0:
		return fmt.Errorf("-n must not be negative, got %d", c.Requests)
	case c.Duration == 0 && c.Requests == 0:
		return errors.New("give a duration (-d) or a request count (-n): a run must stop by itself")
	case c.Warmup < 0:
		return fmt.Errorf("--warmup must not be negative, got %v", c.Warmup)
	case c.Timeout < 0:
		return CheckTimeout(c.Timeout.D())
	case c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0):
		return fmt.Errorf("rate (-R) must be a positive number of requests/s, got %v", c.Rate)
	case c.Interval < 0:
		return errors.New("interval cannot be negative")
	case c.JudgeWindow < 0 || c.JudgeAfter < 0:
		return errors.New("the judged window and when judging starts (--abort-after) cannot be negative")
	case c.Streams < 0:
		return fmt.Errorf("--streams must not be negative, got %d", c.Streams)
	case c.Procs < 0:
		return fmt.Errorf("--cpus must not be negative, got %d", c.Procs)
	case c.Connections*max(1, c.Streams) > MaxConnections:
		return fmt.Errorf("connections × streams must be at most %d", MaxConnections)
	case c.Slack > maxSlack:
		return fmt.Errorf("slack (--slack) must be at most %v, got %v", maxSlack, c.Slack)
	case c.ConnSchedule != nil && (c.Pacer != nil || c.Rate > 0):
		return fmt.Errorf("-c %s is a closed loop's connection schedule: not with -R (an open loop's stages go in -R)", c.ConnSchedule)
	case c.ConnSchedule != nil && c.Driver == DriverLoop:
		return errors.New("a connection schedule (-c with stages) runs on goroutines: leave out --driver loop")
	case c.Driver != DriverAuto && c.Driver != DriverLoop && c.Driver != DriverGoroutines:
		return fmt.Errorf("driver %q: use loop or goroutines (default: the loop where the protocol allows it)", c.Driver)
	}
	return nil
}

func (c *Config) setDefaults() {
	if c.Timeout == 0 {
		c.Timeout = results.Duration(DefaultTimeout)
	}
	if c.Interval == 0 {
		c.Interval = DefaultInterval
	}
	if c.Slack == 0 {
		c.Slack = DefaultSlack
	}
	if c.Pacer == nil && c.Rate > 0 {
		c.Pacer = pace.Constant{PerSec: c.Rate}
	}
	if c.Pacer != nil {
		if _, constant := pace.Schedule(c.Pacer).(pace.Constant); !constant {
			c.Schedule = c.Pacer.String()
		}
		if process, jitter := pace.Arrival(c.Pacer); process != pace.Uniform || jitter > 0 {
			c.Arrival, c.JitterPct = process, jitter*100
		}
	}
	if c.ConnSchedule != nil {
		c.ConnectionSchedule = c.ConnSchedule.String()
	}
	if c.CPUQuota == 0 {
		c.CPUQuota = -1
		if q, ok := cost.CPUQuota(); ok {
			c.CPUQuota = q
		}
	}
}
