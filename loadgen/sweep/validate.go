package sweep

import (
	"cmp"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"loadgen/internal/units"
	"loadgen/loadgen/pace"
	"loadgen/loadgen/protocol"
)

func (c Sidecar) validate() error {
	switch {
	case !slices.Contains(SidecarPlacements, c.Placement):
		return fmt.Errorf("placement %q: use %s", c.Placement, strings.Join(SidecarPlacements, ", "))
	case c.HasProxy() && !slices.Contains(SidecarProxies, c.Proxy):
		return fmt.Errorf("proxy %q: use %s", c.Proxy, strings.Join(SidecarProxies, ", "))
	case c.MTLS && c.Placement != "both":
		return fmt.Errorf("mtls is between two sidecars: placement both, not %s", c.Placement)
	case c.Workers < 0:
		return fmt.Errorf("workers %d: want 1 or more", c.Workers)
	}
	return nil
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// Validate reports what is wrong with s: every required key that is
// missing at once (missing), else the first other thing wrong.
func (s *Spec) Validate() error {
	if err := missingError(s.missing()); err != nil {
		return err
	}
	if _, err := s.pacer(1, 1); err != nil {
		return err
	}
	seen := map[string]bool{}
	baselines := 0
	for i, p := range s.Paths {
		where := fmt.Sprintf("paths[%d]", i)
		if !nameRE.MatchString(p.Name) {
			return fmt.Errorf("%s: name %q: use letters, digits, '-', '_' or '.'", where, p.Name)
		}
		if seen[p.Name] {
			return fmt.Errorf("%s: name %q used twice", where, p.Name)
		}
		seen[p.Name] = true
		if p.Sidecar != nil {
			if err := p.Sidecar.validate(); err != nil {
				return fmt.Errorf("%s (%s): sidecar: %w", where, p.Name, err)
			}
			if !isHTTP(s.Protocol) || s.Protocol != "http1" {
				return fmt.Errorf("%s (%s): sidecar paths carry HTTP/1.1: protocol %s is not", where, p.Name, s.Protocol)
			}
			if p.URL == "" {
				continue // the sweep fills in the pods' address
			}
		}
		if isHTTP(s.Protocol) {
			u, err := url.Parse(p.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("%s (%s): url %q: want http://host:port or https://host:port", where, p.Name, p.URL)
			}
		}
		if p.Workers < 0 {
			return fmt.Errorf("%s (%s): workers %d: want the proxy's worker process count, 1 or more", where, p.Name, p.Workers)
		}
		if (p.CACert != "" || p.Insecure) && !strings.HasPrefix(p.URL, "https://") {
			return fmt.Errorf("%s (%s): cacert and insecure apply to https:// URLs", where, p.Name)
		}
		if p.Cert != "" || p.Key != "" {
			if !strings.HasPrefix(p.URL, "https://") {
				return fmt.Errorf("%s (%s): cert and key are a client certificate, sent over TLS: they apply to https:// URLs", where, p.Name)
			}
			if _, err := (protocol.TLS{CertFile: p.Cert, KeyFile: p.Key}).ClientCert(); err != nil {
				return fmt.Errorf("%s (%s): cert, key: %v", where, p.Name, err)
			}
		}
		if p.Watch != nil {
			if err := p.Watch.validate(); err != nil {
				return fmt.Errorf("%s (%s): watch: %w", where, p.Name, err)
			}
		}
		if p.Baseline {
			baselines++
		}
	}
	if baselines > 1 {
		return errors.New("paths: more than one path is marked baseline")
	}
	if s.Target != nil {
		if err := s.Target.validate(); err != nil {
			return fmt.Errorf("target: %w", err)
		}
	}
	if s.Endpoint != "" && !isHTTP(s.Protocol) {
		return fmt.Errorf("endpoint %q is an HTTP path: protocol %s takes none (payloads set its message size)", s.Endpoint, s.Protocol)
	}
	if s.Endpoint != "" && !strings.HasPrefix(s.Endpoint, "/") {
		return fmt.Errorf("endpoint %q must start with /", s.Endpoint)
	}
	for _, err := range []error{CheckDuration("duration", s.Duration.D()), CheckWarmup("warmup", s.Warmup.D())} {
		if err != nil {
			return err
		}
	}
	switch {
	case s.Timeout < 0:
		return errors.New("timeout cannot be negative")
	case s.Repeats < 1:
		return CheckRepeats("repeats", s.Repeats)
	case s.TrimStart != nil && *s.TrimStart < 0, s.TrimEnd != nil && *s.TrimEnd < 0:
		return errors.New("trim_start and trim_end cannot be negative")
	case !s.costSpan():
		return fmt.Errorf("the cost window's trim (trim_start, trim_end; --trim-start, --trim-end) leaves nothing of each step's %s: make duration longer", units.FormatDuration(s.Duration.D()))
	case s.Hops < 0 || s.Hops > MaxHops:
		return fmt.Errorf("hops must be 1 up to %d, got %d", MaxHops, s.Hops)
	case s.Call != "" && !strings.HasPrefix(s.Protocol, "grpc"):
		return fmt.Errorf("call %q is a gRPC method: use protocol grpc, grpc-stream, grpc-server-stream or grpc-client-stream", s.Call)
	case s.Messages < 0 || s.Window < 0:
		return errors.New("messages and window cannot be negative")
	case s.Messages > 0 && s.Protocol != "grpc-server-stream" && s.Protocol != "grpc-client-stream":
		return fmt.Errorf("messages counts a streaming call's messages: use it with protocol grpc-server-stream or grpc-client-stream, not %s", cmp.Or(s.Protocol, "http1"))
	case s.Window > 0 && s.Protocol != "grpc-stream":
		return fmt.Errorf("window keeps ping-pong messages in flight on a stream: use it with protocol grpc-stream, not %s", cmp.Or(s.Protocol, "http1"))
	case s.Call == "" && (s.Data != "" || s.Protoset != "" || len(s.Proto) > 0 || len(s.ImportPaths) > 0):
		return errors.New("data, protoset, proto and import_paths describe a call: give the method with call: pkg.Service/Method")
	case s.Protoset != "" && len(s.Proto) > 0:
		return errors.New("protoset and proto both give the call's types: keep one")
	case len(s.ImportPaths) > 0 && len(s.Proto) == 0:
		return errors.New("import_paths are where proto's imports are found: give the .proto files with the proto key")
	case s.Feed != "" && s.Protocol != "http1" && s.Protocol != "h2" && s.Protocol != "h2c":
		return fmt.Errorf("feed gives rows to the endpoint's {{row.COLUMN}} fields, which protocols http1, h2 and h2c render, not %s", s.Protocol)
	case s.Call != "" && !(len(s.Payloads) == 1 && s.Payloads[0] == 0):
		return errors.New("with call, the message comes from data: leave payloads out")
	}
	return nil
}

// missing names each required key s lacks: paths, each path's name and
// url (a sidecar path's is the sweep's to fill), ladder and payloads.
func (s *Spec) missing() []missingKeys {
	var m []missingKeys
	if len(s.Paths) == 0 {
		m = append(m, missingKeys{1, "paths: a sweep needs at least one path (name and url)"})
	}
	for i, p := range s.Paths {
		where := fmt.Sprintf("paths[%d]", i)
		noURL := p.URL == "" && p.Sidecar == nil
		switch {
		case p.Name == "" && noURL:
			m = append(m, missingKeys{2, where + ": name and url are missing"})
		case p.Name == "":
			m = append(m, missingKeys{1, where + ": name is missing"})
		case noURL:
			m = append(m, missingKeys{1, fmt.Sprintf("%s (%s): url is missing", where, p.Name)})
		}
	}
	if len(s.Ladder) == 0 {
		m = append(m, missingKeys{1, "ladder is missing: e.g. ladder: c1t1..c128t128"})
	}
	if len(s.Payloads) == 0 {
		m = append(m, missingKeys{1, "payloads is missing: e.g. payloads: [100, 1KiB]"})
	}
	return m
}

// missingKeys is what missing says of n required keys.
type missingKeys struct {
	n   int
	msg string
}

// missingError is every required key missing in one error, counted as
// listed; nil when none is.
func missingError(m []missingKeys) error {
	n := 0
	var msgs []string
	for _, k := range m {
		n += k.n
		msgs = append(msgs, k.msg)
	}
	switch {
	case n == 0:
		return nil
	case n == 1:
		return errors.New(msgs[0])
	}
	return fmt.Errorf("%d required keys are missing: %s", n, strings.Join(msgs, "; "))
}

func (w Watch) validate() error {
	n := 0
	if w.Process != "" {
		n++
	}
	if w.PID != 0 {
		n++
	}
	if len(w.PIDs) > 0 {
		n++
	}
	if w.Cgroup != "" {
		n++
	}
	if n != 1 {
		return errors.New("give exactly one of process, pid, pids or cgroup")
	}
	if w.PID < 0 {
		return fmt.Errorf("pid %d is negative", w.PID)
	}
	if w.Name != "" && !nameRE.MatchString(w.Name) {
		return fmt.Errorf("name %q: use letters, digits, '-', '_' or '.' (assertions call it cpu.NAME)", w.Name)
	}
	return nil
}

// CheckArrival refuses an arrival process or a jitter for a sweep with no
// open-loop step: they pace an open loop. A --find-max sweep (findMax)
// runs open-loop probes whatever its rates.
func (s *Spec) CheckArrival(findMax bool) error {
	return s.checkArrival(findMax, "-R (rates; every step is closed loop)")
}

// checkArrival is CheckArrival, add saying how to ask for a rate.
func (s *Spec) checkArrival(findMax bool, add string) error {
	if s.Arrival == "" && s.JitterPct == 0 {
		return nil
	}
	open := findMax
	for _, r := range s.Rates {
		open = open || r > 0
	}
	if !open {
		return pace.ClosedLoop(fmt.Sprintf("arrival %s, jitter %g%%", cmp.Or(s.Arrival, pace.Uniform), s.JitterPct), add)
	}
	return nil
}
