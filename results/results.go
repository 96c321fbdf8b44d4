// Package results holds what a load run produced, as plain data: the schema
// every other part reads. The engine returns a *Run; sweep writes runs, report
// and compare read them. A Run is immutable once returned.
package results

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"loadgen/internal/units"
)

// SchemaVersion is the version of the result format (Run, Step, Manifest).
// Readers refuse newer ones; older ones are read (results/store upgrades
// them).
//
// Version 4: every latency has its p95 (p95_us). Files of older schemas
// gain it on reading, from their histograms.
//
// Version 3: every time is a JSON number whose key ends in its unit:
// microseconds (_us) for what one request takes or may take (latencies,
// the request timeout, the pacing lag), seconds (_s) for stretches of the
// run (its duration and warm-up, the measured window, last_ok, the outage,
// CPU time, a cost source's window). Versions 1 and 2 wrote durations as
// Go strings ("92.159µs") under keys without a unit. The figures mean the
// same as in version 2.
//
// Version 2: the latency histograms count every request that was sent, a
// failed one at the time it failed (a timeout at its timeout); Succeeded and
// Failed split them. In version 1, Latency counted successful requests only.
const SchemaVersion = 4

// Run is one load run: what was asked, where, and what was measured.
type Run struct {
	Schema int    `json:"schema"`
	Tool   string `json:"tool"` // "loadgen"
	// Labels are what the user named the run (--label k=v).
	Labels    Labels    `json:"labels,omitempty"`
	Config    Config    `json:"config"`
	Env       Env       `json:"environment"`
	Start     time.Time `json:"start"` // start of the measured window
	End       time.Time `json:"end"`
	Summary   Summary   `json:"summary"`
	Generator Cost      `json:"generator"`
	// RequestsByName are a request mix's figures by request name (loadgen
	// run --targets), in the order the names first appear in its file.
	RequestsByName []NamedRequests `json:"requests_by_name,omitempty"`
	// RequestsByHost are a request mix's figures by host, when its
	// requests go to several (scheme://host:port as Name): each host's
	// requests, its connections and its failed connects.
	RequestsByHost []NamedRequests `json:"requests_by_host,omitempty"`
	// Machine is the whole machine's CPU over the measured window: when it
	// was saturated, figures measure contention.
	Machine     *MachineCost `json:"machine,omitempty"`
	Histograms  Encoded      `json:"histograms"`
	Interrupted bool         `json:"interrupted,omitempty"` // stopped early (Ctrl-C, -n reached is not an interruption)
	Notes       []string     `json:"notes,omitempty"`       // warnings for the reader, e.g. generator saturation

	// Aborted says why the run stopped itself (--abort-on-fail: an
	// assertion broke while it ran, e.g. "aborted at 3.0 s: p99<20ms
	// broke (p99 45.1ms over 0.0–3.0 s)"); such a run is Interrupted too.
	Aborted string `json:"aborted,omitempty"`
	// Timeline is the run over time, interval by interval (1 s), the
	// warm-up's first (Interval).
	Timeline []Interval `json:"timeline,omitempty"`
}

// Config is what the run was asked to do.
type Config struct {
	Target      string   `json:"target"`   // URL or host:port
	Protocol    string   `json:"protocol"` // http1, h2, h2c, grpc, grpc-stream, tcp-rr, tcp-crr, tcp-stream
	Method      string   `json:"method,omitempty"`
	Headers     []string `json:"headers,omitempty"`
	BodyBytes   int      `json:"body_bytes,omitempty"`
	Size        int      `json:"size,omitempty"` // payload size for grpc/tcp
	Connections int      `json:"connections"`
	Streams     int      `json:"streams,omitempty"` // concurrent streams per connection (h2, grpc)
	Threads     int      `json:"threads"`
	Duration    Duration `json:"duration_s"`
	Requests    int64    `json:"requests,omitempty"` // -n
	Warmup      Duration `json:"warmup_s,omitempty"`
	Timeout     Duration `json:"timeout_us"`
	Rate        float64  `json:"rate,omitempty"` // requests/s asked, the schedule's mean over the measured window; 0 = closed loop
	// Schedule is the open-loop schedule as asked when it is not a constant
	// rate: ramp:100-5000/30s, step:1000+500/5s.
	Schedule string `json:"schedule,omitempty"`
	// Arrival is the open loop's arrival process when it is not the
	// evenly spaced schedule: "poisson", or "uniform" varied by JitterPct
	// (--arrival, --jitter). Empty: evenly spaced.
	Arrival string `json:"arrival,omitempty"`
	// ConnectionSchedule is a closed loop's connection schedule as asked
	// (-c 10-200/1m,200/2m): Connections is its peak.
	ConnectionSchedule string `json:"connection_schedule,omitempty"`
	// JitterPct is how far each gap was varied, at most, in % of the
	// schedule's (--jitter).
	JitterPct float64 `json:"jitter_pct,omitempty"`
	NewConn   bool    `json:"new_conn,omitempty"`
	NetNS     string  `json:"netns,omitempty"`  // the network namespace the load was sent from
	Client    string  `json:"client,omitempty"` // x-net or grpc-go when a reference client was asked for
	Call      string  `json:"call,omitempty"`   // the gRPC method of --call
	// Messages is a streaming gRPC call's message count (--messages):
	// what a client-streaming call sent, what a server-streaming one asked
	// the echo target for.
	Messages int `json:"messages_per_call,omitempty"`
	// Window is the ping-pong messages in flight on each gRPC stream
	// (--window); 0 or 1: one.
	Window int `json:"window,omitempty"`
	// ZeroRTT is set when -p h3's GET and HEAD went in 0-RTT on resumed
	// sessions (--0rtt).
	ZeroRTT bool `json:"zero_rtt,omitempty"`
	// Feed is the CSV file {{row.COLUMN}} fields took their rows from
	// (--feed), as given.
	Feed string `json:"feed,omitempty"`
	TLS  bool   `json:"tls,omitempty"`
	// OKStatus are the HTTP statuses that counted as a success
	// (--ok-status, as ranges: "200-299,404"); empty: every status below
	// 400, as wrk counts.
	OKStatus string `json:"ok_status,omitempty"`
	// Driver is what sent the requests: "loop" (event loops, as wrk) or
	// "goroutines" (a goroutine per connection).
	Driver string `json:"driver,omitempty"`
	// Targets is the targets file of a request mix (--targets), as given:
	// Target is then the scheme, host and port its requests share.
	Targets string `json:"targets,omitempty"`
}

// OpenLoop tells whether the run was paced (a rate or a schedule was
// asked, even one that starts at 0/s).
func (c Config) OpenLoop() bool { return c.Rate > 0 || c.Schedule != "" }

// Env is where the run happened.
type Env struct {
	Hostname   string `json:"hostname"`
	Kernel     string `json:"kernel"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	CPUModel   string `json:"cpu_model"`
	NumCPU     int    `json:"num_cpu"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	GoVersion  string `json:"go_version"`
	Version    string `json:"loadgen_version"`
}

// Summary is the measured window, reduced.
type Summary struct {
	Requests     int64    `json:"requests"`   // responses received (any status), as wrk counts
	Duration     Duration `json:"duration_s"` // measured window
	RPS          float64  `json:"rps"`
	BytesRead    int64    `json:"bytes_read"`
	BytesWritten int64    `json:"bytes_written"`
	ReadPerSec   float64  `json:"read_bytes_per_sec"`
	WritePerSec  float64  `json:"written_bytes_per_sec"`

	// Latency is corrected for coordinated omission in open loop (measured
	// from each request's intended start) and plain in closed loop. It
	// counts every request sent: answered ones when their answer arrived,
	// failed ones (timeouts, resets, protocol errors) when they failed.
	Latency Latency `json:"latency"`
	// Uncorrected is measured from the actual send; open loop only. It
	// counts the same requests as Latency.
	Uncorrected *Latency `json:"uncorrected,omitempty"`
	// Succeeded and Failed split Latency: requests answered (any status)
	// and requests that got no answer. Failed is absent when none failed.
	Succeeded *Latency `json:"succeeded,omitempty"`
	Failed    *Latency `json:"failed,omitempty"`
	// Connect is the time to establish a connection (TCP + TLS handshake).
	Connect *Latency `json:"connect,omitempty"`
	// ThreadRPS are the requests/s of each thread sampled every 100 ms
	// (wrk's "Req/Sec" row).
	ThreadRPS Spread `json:"thread_rps"`

	Status      map[int]int64 `json:"status,omitempty"` // responses by status code
	Errors      Errors        `json:"errors"`
	Non2xx3xx   int64         `json:"non_2xx_3xx"`
	Connections Connections   `json:"connections"`
	Pacing      *Pacing       `json:"pacing,omitempty"` // open loop only
	// Stages are the figures of each stage of a staged schedule (-R
	// '0-2k/30s,2k/2m'), apart; absent otherwise.
	Stages   []Stage `json:"stages,omitempty"`
	InFlight int64   `json:"in_flight_at_stop,omitempty"`
	// LastOK is when, from the window's start, the last request succeeded:
	// well before the end, the target stopped answering.
	LastOK Duration `json:"last_ok_s,omitempty"`
	// Outage is the longest stretch of the window (to 100 ms) in which
	// nothing was answered and requests failed, starting OutageAt from the
	// window's start: in closed loop, failed connects back off, so a
	// target down for seconds costs few errors.
	Outage   Duration `json:"outage_s,omitempty"`
	OutageAt Duration `json:"outage_at_s,omitempty"`
	// Datagrams are a UDP run's datagrams and their loss (udp-rr,
	// udp-stream), over the whole run, warm-up included.
	Datagrams *Datagrams `json:"datagrams,omitempty"`
	// Messages are the messages of streamed answers (gRPC server
	// streaming), when the requests' answers are streams: a request's
	// Latency is to the end of its answer, these time each message.
	Messages *Messages `json:"messages,omitempty"`
}

// Messages are the messages of streamed answers, in the measured window.
type Messages struct {
	Count  int64   `json:"count"`   // messages received
	PerSec float64 `json:"per_sec"` // Count over the window
	// First is the time to each answer's first message: from the
	// request's intended start in open loop (as Latency), from its send in
	// closed loop.
	First Latency `json:"first"`
	// Gap is the time between two messages of one answer (from the one
	// before); absent when no answer had two.
	Gap *Latency `json:"gap,omitempty"`
}

// OK counts the requests that were answered with a status that is not an
// error (HTTP < 400, gRPC OK; every answer of raw TCP).
func (s Summary) OK() int64 { return s.Requests - s.Errors.Status }

// Attempts counts what was tried in the window: the answered requests, the
// failed ones (every request sent counts in the latency) and the failed
// connection attempts.
func (s Summary) Attempts() int64 { return s.Requests + s.Errors.Total() - s.Errors.Status }

// OKPerSec is the rate of requests answered without error over the
// window: what a comparison or an rps assertion judges (RPS, as wrk's
// Requests/sec, counts error statuses too: a proxy answering 503 at once
// is not faster).
func (s Summary) OKPerSec() float64 {
	if s.Requests <= 0 {
		return 0
	}
	return s.RPS * float64(s.OK()) / float64(s.Requests)
}

// Gbps is what a stream wrote, in Gbit/s: its rate as the tables, the
// progress lines and the studies give it.
func (s Summary) Gbps() float64 { return s.WritePerSec * 8 / 1e9 }

// ErrorShare is the share of what was tried that failed, 0 to 1.
func (s Summary) ErrorShare() float64 {
	if n := s.Attempts(); n > 0 {
		return float64(s.Errors.Total()) / float64(n)
	}
	return 0
}

// Latency is a latency distribution, reduced.
type Latency struct {
	Count        int64    `json:"count"`
	Min          Duration `json:"min_us"`
	Mean         Duration `json:"mean_us"`
	StdDev       Duration `json:"stdev_us"`
	Max          Duration `json:"max_us"`
	WithinStdDev float64  `json:"within_stdev_pct"`
	P50          Duration `json:"p50_us"`
	P75          Duration `json:"p75_us"`
	P90          Duration `json:"p90_us"`
	P95          Duration `json:"p95_us"`
	P99          Duration `json:"p99_us"`
	P999         Duration `json:"p99_9_us"`
	P9999        Duration `json:"p99_99_us"`
}

// Spread is mean/stdev/max of a sampled quantity.
type Spread struct {
	Samples      int     `json:"samples"`
	Mean         float64 `json:"mean"`
	StdDev       float64 `json:"stdev"`
	Max          float64 `json:"max"`
	WithinStdDev float64 `json:"within_stdev_pct"`
}

// Errors counts failed requests by class (wrk's socket errors plus status
// and protocol). Connect counts failed connection attempts.
type Errors struct {
	Connect  int64 `json:"connect"`
	Read     int64 `json:"read"`
	Write    int64 `json:"write"`
	Timeout  int64 `json:"timeout"`
	Status   int64 `json:"status"`
	Protocol int64 `json:"protocol"`
}

// Total is the number of failed requests and connection attempts.
func (e Errors) Total() int64 {
	return e.Connect + e.Read + e.Write + e.Timeout + e.Status + e.Protocol
}

// String lists the classes that occurred with their counts: "connect 3,
// timeout 100"; "" when there were none.
func (e Errors) String() string {
	var parts []string
	for _, c := range []struct {
		name string
		n    int64
	}{{"connect", e.Connect}, {"read", e.Read}, {"write", e.Write}, {"timeout", e.Timeout}, {"status", e.Status}, {"protocol", e.Protocol}} {
		if c.n > 0 {
			parts = append(parts, c.name+" "+strconv.FormatInt(c.n, 10))
		}
	}
	return strings.Join(parts, ", ")
}

// Failures names what failed in s, each with its count: the error status
// codes (HTTP's 400 and up, gRPC's but OK) and the other classes, as
// "404 × 101284, timeout × 12"; "" when nothing failed. Error statuses
// the summary does not break down by code are "status × N".
func (s Summary) Failures() string {
	var parts []string
	codes := make([]int, 0, len(s.Status))
	for code := range s.Status {
		codes = append(codes, code)
	}
	slices.Sort(codes)
	var listed int64
	for _, code := range codes {
		if n := s.Status[code]; n > 0 && ErrorStatus(code) {
			parts = append(parts, fmt.Sprintf("%d × %d", code, n))
			listed += n
		}
	}
	e := s.Errors
	if rest := e.Status - listed; rest > 0 {
		parts = append(parts, fmt.Sprintf("status × %d", rest))
	}
	for _, c := range []struct {
		name string
		n    int64
	}{{"connect", e.Connect}, {"read", e.Read}, {"write", e.Write}, {"timeout", e.Timeout}, {"protocol", e.Protocol}} {
		if c.n > 0 {
			parts = append(parts, fmt.Sprintf("%s × %d", c.name, c.n))
		}
	}
	return strings.Join(parts, ", ")
}

// ErrorStatus tells whether a status code of Summary.Status is an error:
// gRPC's codes (below 100) but OK (0), HTTP's from 400.
func ErrorStatus(code int) bool {
	if code < 100 {
		return code != 0
	}
	return code >= 400
}

// Socket is what wrk prints on its "Socket errors" line.
func (e Errors) Socket() int64 { return e.Connect + e.Read + e.Write + e.Timeout }

// Connections counts transport connections.
type Connections struct {
	Established int64 `json:"established"` // over the whole run, warm-up included
	Failed      int64 `json:"failed"`
	// Measured is how many of them were opened in the measured window: with
	// a new connection per request, the connections (TLS handshakes) per
	// second are Measured over the window.
	Measured int64 `json:"measured"`
	// FailedMeasured is how many of the failed ones were tried in the
	// measured window, where they count as connect errors.
	FailedMeasured int64 `json:"failed_measured"`
}

// Datagrams count a UDP run's datagrams over the whole run, warm-up
// included: what was sent, what the other end received (for udp-rr the
// answers that came back within the timeout; for udp-stream the sink's own
// count, asked when each connection closed) and the difference, lost.
type Datagrams struct {
	Sent          int64 `json:"sent"`
	Received      int64 `json:"received"`
	ReceivedBytes int64 `json:"received_bytes"`
	Lost          int64 `json:"lost"`
	// Unknown are datagrams sent on connections whose receiver never
	// answered how many it got: in neither Received nor Lost.
	Unknown int64 `json:"unknown,omitempty"`
	// Span is the time they were sent over (warm-up and window): the
	// receiver's rate is Received over it.
	Span Duration `json:"span_s"`
}

// LossPercent is Lost as a share of the datagrams whose fate is known.
func (d Datagrams) LossPercent() float64 {
	known := d.Sent - d.Unknown
	if known <= 0 {
		return 0
	}
	return 100 * float64(d.Lost) / float64(known)
}

// Pacing reports how well the open loop kept its schedule.
type Pacing struct {
	Asked float64 `json:"asked_rps"` // the schedule's mean over the window
	// StartRate and EndRate are the schedule's rates at the window's start
	// and end, when it is not constant (a ramp, steps).
	StartRate float64  `json:"start_rps,omitempty"`
	EndRate   float64  `json:"end_rps,omitempty"`
	Achieved  float64  `json:"achieved_rps"` // requests sent / window
	Sent      int64    `json:"sent"`
	Late      int64    `json:"late"`   // sent more than LateAfter after their intended start
	Unsent    int64    `json:"unsent"` // intended within the window but never started
	MaxLag    Duration `json:"max_lag_us"`
	// Slack is how late a request could start to share its event loop's
	// wake-up with those due after it (loadgen.Config.Slack): each
	// latency counts it. 0 on goroutines, or asked for none.
	Slack Duration `json:"slack_us,omitempty"`
}

// LateAfter is the lag past which a paced send is counted late.
const LateAfter = time.Millisecond

// Encoded holds histograms in HdrHistogram's compressed base64 form.
type Encoded struct {
	Latency     string `json:"latency"` // every request (Summary.Latency)
	Uncorrected string `json:"uncorrected,omitempty"`
	Connect     string `json:"connect,omitempty"`
	Succeeded   string `json:"succeeded,omitempty"` // answered requests, corrected
	Failed      string `json:"failed,omitempty"`    // failed requests, corrected
	// The messages of streamed answers (Summary.Messages.First and Gap).
	MessageFirst string `json:"message_first,omitempty"`
	MessageGap   string `json:"message_gap,omitempty"`
}

// Duration is a time.Duration. In the result format (Run, Step, Manifest)
// it is a number under a key that names its unit ("p99_us", "duration_s":
// json.go); on its own, in other documents (a distributed run's worker
// reports), it reads and writes as "1.5ms".
type Duration time.Duration

func (d Duration) D() time.Duration { return time.Duration(d) }

func (d Duration) String() string { return time.Duration(d).String() }

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var ns int64 // accept plain nanoseconds too
		if err2 := json.Unmarshal(b, &ns); err2 != nil {
			return fmt.Errorf("duration: want a string like \"1.5ms\": %w", err)
		}
		*d = Duration(ns)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	*d = Duration(v)
	return nil
}

// Verdict says why a finished run failed, whatever its error budget, or
// "" if it did not: nothing was sent, no request succeeded, the target
// stopped answering before the end (Stalled) or for a stretch in the
// middle (Outed).
func (s Summary) Verdict() string {
	switch gap, stalled := s.Stalled(); {
	case s.Attempts() == 0:
		return "no request was sent"
	case s.OK() == 0:
		return fmt.Sprintf("no request succeeded: %d of %d failed (%s)", s.Errors.Total(), s.Attempts(), s.Failures())
	case stalled:
		return fmt.Sprintf("the target stopped answering: no request succeeded in the last %s of %s (%s)",
			round(gap), round(s.Duration.D()), s.Errors)
	case s.Outed():
		return s.OutageText()
	}
	return ""
}

// OutageText describes the outage (Outage, OutageAt).
func (s Summary) OutageText() string {
	at, d := s.OutageAt.D(), s.Outage.D()
	return fmt.Sprintf("the target stopped answering for %s, from %s to %s of %s (%s)",
		round(d), round(at), round(at+d), round(s.Duration.D()), s.Errors)
}

// round prints a duration to 100 ms, as a user would type it.
func round(d time.Duration) string { return units.FormatDuration(d.Round(100 * time.Millisecond)) }

// Outed tells whether the window had an outage long enough to fail the
// run, by the measure Stalled uses: more than a second and a tenth of the
// window — and more than twice the p99 of the answered requests, since
// where every answer takes seconds (a slow endpoint at -c 1) a quiet
// stretch with a timeout in it is the load's pace, not an outage.
func (s Summary) Outed() bool {
	slow := s.Latency.P99
	if s.Succeeded != nil {
		slow = s.Succeeded.P99
	}
	return s.Outage.D() > max(time.Second, s.Duration.D()/10, 2*slow.D())
}

// Stalled tells whether the target stopped answering before the window's
// end — requests failed and none succeeded in the last second and tenth
// of the window or more — and for how long.
func (s Summary) Stalled() (time.Duration, bool) {
	window := s.Duration.D()
	gap := window - s.LastOK.D()
	return gap, s.Errors.Total() > 0 && s.LastOK > 0 && gap > max(time.Second, window/10)
}

// Manifest describes a sweep's results directory: its plan and where it
// ran. It is written before the first step.
type Manifest struct {
	Schema   int             `json:"schema"`
	Tool     string          `json:"tool"` // "loadgen"
	Kind     string          `json:"kind"` // "sweep"
	Created  time.Time       `json:"created"`
	Spec     json.RawMessage `json:"spec"` // the sweep as asked (loadgen/sweep.Spec)
	Baseline string          `json:"baseline,omitempty"`
	Paths    []string        `json:"paths"`
	Steps    []string        `json:"steps"` // step IDs in plan order
	Env      Env             `json:"environment"`
}
