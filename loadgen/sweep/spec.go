package sweep

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"loadgen/internal/sidecarnames"
	"loadgen/loadgen/client"
	"loadgen/loadgen/pace"
)

// Spec is a sweep: the same target reached through each path, across a
// ladder of connections/threads and payload sizes, each step repeated.
type Spec struct {
	Paths    []Path   `yaml:"paths" json:"paths"`
	Target   *Watch   `yaml:"target,omitempty" json:"target,omitempty"` // the target's processes, watched on every path
	Ladder   Ladder   `yaml:"ladder" json:"ladder"`
	Payloads Payloads `yaml:"payloads" json:"payloads"`
	Protocol string   `yaml:"protocol" json:"protocol"`
	// Endpoint is the HTTP path asked on every path's URL; {size} becomes
	// the payload size. Default /bytes/{size} (httpbin's).
	Endpoint string   `yaml:"endpoint" json:"endpoint"`
	Duration Duration `yaml:"duration" json:"duration"`
	Warmup   Duration `yaml:"warmup" json:"warmup"`
	Timeout  Duration `yaml:"timeout" json:"timeout"`
	Repeats  int      `yaml:"repeats" json:"repeats"`
	Rates    Rates    `yaml:"rate" json:"rate"` // 0 or empty: closed loop
	// Arrival and JitterPct are the open-loop steps' arrival process
	// (`loadgen run`'s --arrival and --jitter): "" or uniform, or poisson;
	// each gap of the uniform schedule varied by up to ±JitterPct %.
	Arrival   string  `yaml:"arrival,omitempty" json:"arrival,omitempty"`
	JitterPct float64 `yaml:"jitter_pct,omitempty" json:"jitter_pct,omitempty"`
	// TrimStart and TrimEnd cut the watched processes' cost window, never
	// the latency's: it starts TrimStart into each step's measured window
	// and ends TrimEnd before its end (nil: min(1 s, a quarter of the
	// window)). istio/tools' fortio.py cuts 62 s and 30 s.
	TrimStart *Duration `yaml:"trim_start,omitempty" json:"trim_start,omitempty"`
	TrimEnd   *Duration `yaml:"trim_end,omitempty" json:"trim_end,omitempty"`
	// Call, Data and Protoset are `loadgen run`'s --call, --data and
	// --protoset: with protocol grpc or grpc-stream, any method of the
	// target instead of loadgen's echo (payloads then do not apply).
	Call     string `yaml:"call,omitempty" json:"call,omitempty"`
	Data     string `yaml:"data,omitempty" json:"data,omitempty"`
	Protoset string `yaml:"protoset,omitempty" json:"protoset,omitempty"`
	// Messages and Window are `loadgen run`'s --messages (protocol
	// grpc-server-stream or grpc-client-stream: a call's messages) and
	// --window (grpc-stream: ping-pong messages in flight on each stream).
	Messages int `yaml:"messages,omitempty" json:"messages,omitempty"`
	Window   int `yaml:"window,omitempty" json:"window,omitempty"`
	// Proto and ImportPaths are `loadgen run`'s --proto and -I: .proto
	// files parsed for the call's types instead of server reflection, and
	// the directories their imports are found in (then each file's own).
	Proto       []string `yaml:"proto,omitempty" json:"proto,omitempty"`
	ImportPaths []string `yaml:"import_paths,omitempty" json:"import_paths,omitempty"`
	// Feed is `loadgen run`'s --feed: a CSV file whose rows the
	// endpoint's {{row.COLUMN}} fields take, one row per request, on
	// every path alike (protocols http1, h2, h2c).
	Feed string `yaml:"feed,omitempty" json:"feed,omitempty"`
	// Hops is how many targets each request crosses, a chain (serve
	// httpbin --call; k8s run --hops): the report gives the latency and
	// proxy cost each path adds per hop. 0 or 1: one target.
	Hops int `yaml:"hops,omitempty" json:"hops,omitempty"`
	// Builtin names the built-in sweep this is (BuiltinDemo, BuiltinSize,
	// BuiltinLab), which starts its own servers: a resume from the
	// manifest starts them again. Not a key of a sweep file.
	Builtin string `yaml:"-" json:"builtin,omitempty"`
	// KeyType is the kind of key of the TLS certificates a built-in sweep
	// makes for its servers (size's --key-type: rsa, ecdsa), recorded so
	// that a resume makes the same ("": not recorded, as by an older
	// loadgen). Not a key of a sweep file.
	KeyType string `yaml:"-" json:"key_type,omitempty"`
}

// MaxHops bounds Spec.Hops: a target's chain of calls (httpbin.MaxHops).
const MaxHops = 64

// Path is one way to reach the target.
type Path struct {
	Name     string `yaml:"name" json:"name"`
	URL      string `yaml:"url" json:"url"`
	Baseline bool   `yaml:"baseline,omitempty" json:"baseline,omitempty"`
	Watch    *Watch `yaml:"watch,omitempty" json:"watch,omitempty"`

	// NewConn opens a new connection for every request on this path (with
	// an https:// URL: a full TLS handshake each, the "SSL TPS" of ingress
	// sizing), as `loadgen run --new-conn` does.
	NewConn bool `yaml:"new_conn,omitempty" json:"new_conn,omitempty"`
	// CACert and Insecure are `loadgen run`'s --cacert and --insecure for
	// an https:// path.
	CACert   string `yaml:"cacert,omitempty" json:"cacert,omitempty"`
	Insecure bool   `yaml:"insecure,omitempty" json:"insecure,omitempty"`
	// Cert and Key are `loadgen run`'s --cert and --key: the client
	// certificate (PEM) an https:// path presents to a server that asks
	// for one (mutual TLS). A Cert file that holds the key needs no Key.
	Cert string `yaml:"cert,omitempty" json:"cert,omitempty"`
	Key  string `yaml:"key,omitempty" json:"key,omitempty"`
	// Workers is how many worker processes (one per CPU) the proxy on this
	// path runs, nginx's worker_processes: recorded with every step, it
	// makes the report's ingress sizing table.
	Workers int `yaml:"workers,omitempty" json:"workers,omitempty"`
	// NetNS is the network namespace (a name under /var/run/netns, or a
	// file) the load is sent from: a pod of the CNI lab. Empty: loadgen's own.
	NetNS string `yaml:"netns,omitempty" json:"netns,omitempty"`
	// Sidecar makes the path go through local sidecars as a mesh does:
	// the sweep makes a pair of pods (network namespaces) for it, runs the
	// target in the server pod and the proxies the placement names, sends
	// the load from the client pod and watches the proxies. Its URL, netns
	// and watch are the sweep's to fill.
	Sidecar *Sidecar `yaml:"sidecar,omitempty" json:"sidecar,omitempty"`
}

// Sidecar is a path through local sidecars (needs root).
type Sidecar struct {
	Proxy     string `yaml:"proxy" json:"proxy"`         // nginx, haproxy, caddy, envoy
	Placement string `yaml:"placement" json:"placement"` // none, serveronly, clientonly, both
	MTLS      bool   `yaml:"mtls,omitempty" json:"mtls,omitempty"`
	Workers   int    `yaml:"workers,omitempty" json:"workers,omitempty"` // per proxy; default Istio's 2
}

// The sidecar profiles and placements a path may name: meshes/sidecar's
// Proxies and Placements, from internal/sidecarnames (this layer may not
// import meshes).
var (
	SidecarProxies    = sidecarnames.Proxies()
	SidecarPlacements = sidecarnames.Placements()
)

// Watch names processes whose CPU and memory are recorded: exactly one of
// a process name (every process of that name), a pid (that process and its
// descendants: an nginx master and its workers), or a cgroup directory.
type Watch struct {
	Process string `yaml:"process,omitempty" json:"process,omitempty"`
	PID     int    `yaml:"pid,omitempty" json:"pid,omitempty"`
	// PIDs are several processes and their descendants (a path's sidecars).
	PIDs   []int  `yaml:"pids,omitempty" json:"pids,omitempty"`
	Cgroup string `yaml:"cgroup,omitempty" json:"cgroup,omitempty"`
	// Name is what reports and assertions (cpu.NAME) call them; by
	// default the process name, pidN or cgroup.
	Name string `yaml:"name,omitempty" json:"name,omitempty"`
}

// Label names the watch in tables: its name, the process name, or
// pid/cgroup.
func (w Watch) Label() string {
	switch {
	case w.Name != "":
		return w.Name
	case w.Process != "":
		return w.Process
	case w.PID != 0:
		return "pid" + strconv.Itoa(w.PID)
	case len(w.PIDs) > 0:
		return "pids"
	default:
		return "cgroup"
	}
}

// Defaults of a sweep.
const (
	DefaultProtocol = "http1"
	DefaultEndpoint = "/bytes/{size}"
	DefaultDuration = 30 * time.Second
	DefaultRepeats  = 1
)

// The plan of a sweep of flags alone (loadgen sweep --path …): its
// ladder, payloads and rates when the flags do not say, in the flags'
// grammar (ParseLadder, ParsePayloads, ParseRates).
const (
	DefaultLadder   = "c1t1..c128t128"
	DefaultPayloads = "100,1KiB"
	DefaultRates    = "0" // the closed loop
)

// Parse reads a sweep file strictly: an unknown key, a bad ladder or a
// negative payload is an error naming its line.
func Parse(r io.Reader) (Spec, error) {
	// Keys a file leaves out take their defaults; a key it gives as 0 is
	// checked as written (repeats: 0 is an error, not one repeat).
	s := Spec{Repeats: unset, Duration: unset}
	b, err := io.ReadAll(r)
	if err != nil {
		return s, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		if errors.Is(err, io.EOF) {
			return s, errors.New("empty sweep file")
		}
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return s, cleanYAMLError(err)
		}
		// The decoder went on past what it could not read: the keys
		// missing are told in the same message as the unknown ones.
		msg := cleanYAMLError(err).Error()
		if m := missingError(s.missing()); m != nil {
			msg += "; " + m.Error()
		}
		return s, errors.New(msg)
	}
	switch {
	case s.Repeats == 0:
		return s, errors.New("repeats must be at least 1, got 0 (leave it out for 1)")
	case s.Duration == 0:
		return s, errors.New("duration must be positive, got 0 (leave it out for 30s)")
	}
	if s.Repeats == unset {
		s.Repeats = 0 // the default
	}
	if s.Duration == unset {
		s.Duration = 0
	}
	s.setDefaults()
	return s, s.Validate()
}

// Complete fills the defaults of a sweep built as a value (from flags, say)
// and checks it, as Parse does for a file.
func (s *Spec) Complete() error {
	s.setDefaults()
	return s.Validate()
}

// SetProtocol sets the protocol over a spec already read: an endpoint
// left at DefaultEndpoint goes back to "", the default of the protocol
// given (Complete fills it), so a file's HTTP default never reaches TCP.
func (s *Spec) SetProtocol(protocol string) {
	if s.Endpoint == DefaultEndpoint {
		s.Endpoint = ""
	}
	s.Protocol = protocol
}

// SetCall sets the gRPC method over a spec already read: a method clears
// the payloads, its message is the call's data (Complete sets them to 0).
func (s *Spec) SetCall(call string) {
	s.Call = call
	if call != "" {
		s.Payloads = nil
	}
}

// cleanYAMLError turns yaml's "yaml: unmarshal errors:\n  line 3: …" into
// one line.
func cleanYAMLError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n")
	lines := strings.Split(msg, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return errors.New(unknownKeys(strings.Join(lines, "; ")))
}

// unset marks, while a file is read, a key it did not give.
const unset = math.MinInt32

// setDefaults fills the zero fields.
func (s *Spec) setDefaults() {
	if s.Protocol == "" {
		s.Protocol = DefaultProtocol
	}
	if s.Endpoint == "" && isHTTP(s.Protocol) {
		s.Endpoint = DefaultEndpoint
	}
	if s.Duration == 0 {
		s.Duration = Duration(DefaultDuration)
	}
	if s.Repeats == 0 {
		s.Repeats = DefaultRepeats
	}
	if len(s.Rates) == 0 {
		s.Rates = Rates{0}
	}
	if s.Call != "" && len(s.Payloads) == 0 {
		s.Payloads = Payloads{0} // the message is the call's data
	}
	for i, p := range s.Paths {
		if isHTTP(s.Protocol) {
			s.Paths[i].URL = client.WithScheme(p.URL)
		}
	}
	if len(s.Paths) > 0 && s.BaselineIndex() < 0 {
		for i := range s.Paths {
			if s.Paths[i].Name == "baseline" {
				s.Paths[i].Baseline = true
			}
		}
	}
}

func isHTTP(p string) bool { return p == "http1" || p == "h2" || p == "h2c" || p == "h3" }

// CostWindow is the span of a measured window [start, end) the watched
// processes' CPU and memory are sampled over: TrimStart after its start,
// TrimEnd before its end (by default min(1 s, a quarter of the window),
// past which the last requests' answers and the reporter's work fall).
func (s *Spec) CostWindow(start, end time.Time) (time.Time, time.Time) {
	from, to := start, end.Add(-min(time.Second, end.Sub(start)/4))
	if s.TrimStart != nil {
		from = start.Add(s.TrimStart.D())
	}
	if s.TrimEnd != nil {
		to = end.Add(-s.TrimEnd.D())
	}
	return from, to
}

// costSpan says whether CostWindow leaves any of a step's measured
// window.
func (s *Spec) costSpan() bool {
	var t0 time.Time
	from, to := s.CostWindow(t0, t0.Add(s.Duration.D()))
	return to.After(from)
}

// WatchNames are what assertions call the processes the sweep watches
// (cpu.NAME, mem.NAME): each path's watch or sidecar proxy, and "target".
func (s *Spec) WatchNames() []string {
	var out []string
	if s.Target != nil {
		out = append(out, "target")
	}
	for _, p := range s.Paths {
		switch {
		case p.Watch != nil:
			out = append(out, p.Watch.Label())
		case p.Sidecar != nil:
			out = append(out, p.Sidecar.Proxy)
		}
	}
	return out
}

// URLs are the addresses the sweep's paths load, in their order: the
// paths that have one (a sidecar path's is the sweep's to fill, a demo
// path's the demo's).
func (s *Spec) URLs() []string {
	var out []string
	for _, p := range s.Paths {
		if p.URL != "" {
			out = append(out, p.URL)
		}
	}
	return out
}

// BaselineName is the name of the baseline path, or "".
func (s *Spec) BaselineName() string {
	if i := s.BaselineIndex(); i >= 0 {
		return s.Paths[i].Name
	}
	return ""
}

// BaselineIndex is the index of the baseline path, or -1.
func (s *Spec) BaselineIndex() int {
	for i, p := range s.Paths {
		if p.Baseline {
			return i
		}
	}
	return -1
}

// pacer is an open-loop step's schedule at rate, on the spec's arrival
// process.
func (s *Spec) pacer(rate float64, seed uint64) (pace.Pacer, error) {
	p, err := pace.WithArrival(pace.Constant{PerSec: rate}, s.Arrival, s.JitterPct/100, seed)
	if err != nil {
		return nil, fmt.Errorf("arrival: %w", err)
	}
	return p, nil
}
