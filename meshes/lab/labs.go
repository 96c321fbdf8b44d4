package lab

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"loadgen/results/report"
)

// Skip is a mode this kernel cannot build, and why: StartModes leaves it
// out and goes on with the others.
type Skip struct {
	Mode Mode
	Err  error
}

// String is the one wording of a skipped mode: the lab's warning as it
// skips the mode, and its list after the matrix.
func (s Skip) String() string { return fmt.Sprintf("skipped mode %s: %v", s.Mode, s.Err) }

// StartModes starts a lab of cfg per mode, in order. A mode this kernel
// lacks (an *Unavailable with ModeOnly) is passed to skipped and left out;
// any other failure stops, with the labs started so far. When no mode
// could be started, that is the error, naming why each was skipped.
func StartModes(ctx context.Context, cfg Config, modes []Mode, skipped func(Skip)) ([]*Lab, error) {
	return startModes(ctx, cfg, modes, skipped, Available, Start)
}

func startModes(ctx context.Context, cfg Config, modes []Mode, skipped func(Skip),
	available func(Config) error, start func(context.Context, Config) (*Lab, error)) ([]*Lab, error) {
	var labs []*Lab
	var why []string
	for _, m := range modes {
		cfg.Mode = m
		if err := available(cfg); err != nil {
			var u *Unavailable
			if errors.As(err, &u) && u.ModeOnly {
				skipped(Skip{Mode: m, Err: err})
				why = append(why, fmt.Sprintf("%s: %v", m, err))
				continue
			}
			return labs, err
		}
		l, err := start(ctx, cfg)
		if err != nil {
			return labs, err
		}
		labs = append(labs, l)
	}
	if len(labs) == 0 {
		return nil, fmt.Errorf("lab: no mode could be built here (%s)", strings.Join(why, "; "))
	}
	return labs, nil
}

// LoadPath is a path a sweep over labs loads (loadgen/sweep's LabPath,
// field for field).
type LoadPath struct {
	Name     string // MODE.PATH; the baseline's own name
	Dial     string // host:port
	NetNS    string // the namespace the load is sent from
	Baseline bool
}

// LoadPaths are the labs' applicable paths, named MODE.PATH, with the
// loopback baseline once, from the first lab, under its own name.
func LoadPaths(labs []*Lab) []LoadPath {
	var out []LoadPath
	for i, l := range labs {
		for _, p := range l.Paths() {
			if p.NotApplicable != "" || (p.Baseline && i > 0) {
				continue
			}
			name := report.ModePath(string(p.Mode), p.Name)
			if p.Baseline {
				name = p.Name
			}
			out = append(out, LoadPath{Name: name, Dial: p.Dial, NetNS: p.ClientNS, Baseline: p.Baseline})
		}
	}
	return out
}

// PlannedPaths are the paths a lab of modes would load for the wanted
// path names (none: every one, PathNames), before anything is built, as
// a dry run prints them: each mode × path, named MODE.PATH, its Dial
// saying where ("lab MODE: PATH"). A mode's not-applicable paths, and
// the loopback baseline's sharing, are known once the labs are built
// (LoadPaths).
func PlannedPaths(modes []Mode, names []string) []LoadPath {
	if len(names) == 0 {
		names = PathNames()
	}
	var out []LoadPath
	for _, m := range modes {
		for _, n := range names {
			out = append(out, LoadPath{Name: report.ModePath(string(m), n), Dial: "lab " + string(m) + ": " + n})
		}
	}
	return out
}

// Server is a target the labs' applicable paths need: one per server
// namespace and address, run in Lab's namespace NS (Lab.Command).
type Server struct {
	Lab    *Lab
	NS     string
	Listen string // host:port
}

// Servers are the targets to start for labs' applicable paths, each once,
// in the paths' order.
func Servers(labs []*Lab) []Server {
	var out []Server
	seen := map[string]bool{}
	for _, l := range labs {
		for _, p := range l.Paths() {
			key := p.ServerNS + " " + p.Listen
			if p.NotApplicable != "" || seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, Server{Lab: l, NS: p.ServerNS, Listen: p.Listen})
		}
	}
	return out
}
