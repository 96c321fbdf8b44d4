package sweep

import (
	"strconv"
	"strings"
	"time"
)

// loadgen size's plan as a sweep: for each worker count a plaintext and a
// TLS nginx in front of loadgen's httpbin (meshes/nginxingress starts
// them), the TLS ones with a new connection per request.

// loadgen size's plan when its flags do not say: the response body
// (ParseSize's grammar), a ladder of many connections on few threads
// (ParseLadder's), and each step's measured window and warm-up. Its TLS
// key's kind is nginxingress.DefaultSizingKeyType (this layer may not
// import targets' key types).
const (
	DefaultSizingPayload  = "1KiB"
	DefaultSizingLadder   = "c64t2"
	DefaultSizingDuration = 5 * time.Second
	DefaultSizingWarmup   = time.Second
)

// SizingProxy is one nginx of loadgen size: meshes/nginxingress's
// SizingProxy, field for field, which converts to it (this layer may not
// import meshes). Planned, its URL says where it will be and PID is 0.
type SizingProxy struct {
	Name    string // the path's name, nginx-wN or nginx-wN-tls
	Workers int    // worker_processes
	TLS     bool   // the TLS listener
	URL     string
	PID     int // nginx's master
}

// SizingAt is where a running sizing is: the target's pid, the CA file
// its TLS listeners' certificate is checked by, and under mutual TLS the
// client certificate and key its TLS paths present. Zero while planned.
type SizingAt struct {
	TargetPID         int
	CACert, Cert, Key string
}

// Sizing is loadgen size's plan: base (the command's closed-loop sweep of
// its flags, paths to come) over HTTP/1.1 at /bytes/{size}, through each
// nginx in order, a TLS listener's path with a new connection per request
// (handshakes/s). keyType is the TLS key's kind (--key-type), recorded so
// that a resume makes the same (SizingFlags). Running (at set), each path
// is watched by its nginx's master and the target by its pid, and the TLS
// paths use at's files; planned, a path's URL is the proxy's, what a dry
// run prints and a resume checks before nginx starts.
func Sizing(base Spec, proxies []SizingProxy, keyType string, at SizingAt) *Spec {
	s := base
	s.Protocol, s.Endpoint, s.Builtin, s.KeyType = "http1", DefaultEndpoint, BuiltinSize, keyType
	s.Paths = nil
	if at.TargetPID != 0 {
		s.Target = &Watch{PID: at.TargetPID}
	}
	for _, px := range proxies {
		p := Path{Name: px.Name, URL: px.URL, Workers: px.Workers, NewConn: px.TLS}
		if px.PID != 0 {
			p.Watch = &Watch{PID: px.PID, Name: "nginx"}
		}
		if px.TLS {
			p.CACert, p.Cert, p.Key = at.CACert, at.Cert, at.Key
		}
		s.Paths = append(s.Paths, p)
	}
	return &s
}

// Flag is a command-line flag's name (without dashes) and value.
type Flag struct{ Name, Value string }

// SizingFlags are the flags of loadgen size that remake saved, the plan
// of a sizing (Sizing's), for `size -o DIR --resume`: the worker counts
// (one per plaintext nginx, in order), the ladder, the payload (when there
// is one), the durations, the repeats, --mtls when its TLS paths presented
// a client certificate, and --key-type when the plan records it (an older
// loadgen's does not).
func SizingFlags(saved *Spec) []Flag {
	var workers, rungs []string
	mtls := false
	for _, p := range saved.Paths {
		if !p.NewConn && p.Workers > 0 {
			workers = append(workers, strconv.Itoa(p.Workers))
		}
		mtls = mtls || p.Cert != ""
	}
	for _, r := range saved.Ladder {
		rungs = append(rungs, r.String())
	}
	payload := ""
	if len(saved.Payloads) == 1 {
		payload = strconv.Itoa(saved.Payloads[0])
	}
	var out []Flag
	for _, f := range []Flag{
		{"workers", strings.Join(workers, ",")}, {"ladder", strings.Join(rungs, ",")}, {"payload", payload},
		{"duration", saved.Duration.D().String()}, {"warmup", saved.Warmup.D().String()}, {"repeats", strconv.Itoa(saved.Repeats)},
		{"mtls", strconv.FormatBool(mtls)}, {"key-type", saved.KeyType},
	} {
		if f.Value != "" && f.Value != "false" {
			out = append(out, f)
		}
	}
	return out
}
