package sweep

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The demo's paths: loadgen's httpbin, and a real nginx in front of it.
const (
	DemoBaseline = "baseline"
	DemoNginx    = "nginx"
)

// Demo is the built-in demo's plan (loadgen sweep with neither -f nor
// --path), its paths' addresses to come (DemoAt): the baseline, and the
// nginx path when nginx is installed.
func Demo(nginx bool) *Spec {
	spec := &Spec{
		Paths:    []Path{{Name: DemoBaseline, Baseline: true}},
		Ladder:   Ladder{{Connections: 1, Threads: 1}, {Connections: 4, Threads: 4}, {Connections: 16, Threads: 16}, {Connections: 64, Threads: 64}},
		Payloads: Payloads{100, 1024},
		Protocol: "http1",
		Endpoint: DefaultEndpoint,
		Duration: Duration(3 * time.Second),
		Warmup:   Duration(500 * time.Millisecond),
		Repeats:  1,
		Rates:    Rates{0},
		Builtin:  BuiltinDemo,
	}
	if nginx {
		spec.Paths = append(spec.Paths, Path{Name: DemoNginx})
	}
	return spec
}

// DemoOutline is the demo's plan as loadgen sweep's help says it: its
// ladder's rungs × its payloads × each step's measured window.
func DemoOutline() string { return Demo(false).outline() }

// outline is s's ladder, payloads and measured window in words:
// "c1t1 c4t4 × 100 B, 1 KiB × 3 s".
func (s *Spec) outline() string {
	rungs := make([]string, len(s.Ladder))
	for i, r := range s.Ladder {
		rungs[i] = r.String()
	}
	sizes := make([]string, len(s.Payloads))
	for i, n := range s.Payloads {
		sizes[i] = spacedUnit(FormatSize(n))
	}
	return strings.Join(rungs, " ") + " × " + strings.Join(sizes, ", ") + " × " +
		strconv.FormatFloat(s.Duration.D().Seconds(), 'g', -1, 64) + " s"
}

// spacedUnit puts a space between a figure and its unit: 1KiB, 1 KiB.
func spacedUnit(s string) string {
	i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if i <= 0 {
		return s
	}
	return s[:i] + " " + s[i:]
}

// DemoAt fills a demo's plan with where its servers listen, then checks
// it: the baseline at httpbin (host:port), the target watched by its pid
// httpbinPID; the nginx path, when the plan has it, at nginxURL, watched by
// nginx's master pid.
func (s *Spec) DemoAt(httpbin string, httpbinPID int, nginxURL string, nginxPID int) error {
	found := false
	for i, p := range s.Paths {
		switch p.Name {
		case DemoBaseline:
			s.Paths[i].URL, found = "http://"+httpbin, true
		case DemoNginx:
			s.Paths[i].URL, s.Paths[i].Watch = nginxURL, &Watch{PID: nginxPID, Name: "nginx"}
		}
	}
	if !found {
		return errors.New("the demo's plan has no baseline path")
	}
	s.Target = &Watch{PID: httpbinPID}
	return s.Validate()
}

// DemoRefuses is why the built-in demo cannot take the flags given
// (changed tells whether a flag was on the command line; protocol is
// -p's value), or nil: the demo watches its own processes and serves
// HTTP/1.1, so --watch, --target-watch, another -p and a gRPC call are
// refused, never ignored.
func DemoRefuses(changed func(flag string) bool, protocol string) error {
	switch {
	case changed("watch") || changed("target-watch"):
		name := "--target-watch"
		if changed("watch") {
			name = "--watch"
		}
		return errors.New(name + " needs --path: the built-in demo watches its own processes")
	case changed("protocol") && protocol != "http1":
		return fmt.Errorf("-p %s: the built-in demo serves HTTP/1.1 (loadgen's httpbin, nginx in front of it): give the paths with --path NAME=URL or -f for another protocol", protocol)
	}
	for _, name := range []string{"call", "data", "protoset"} {
		if changed(name) {
			return fmt.Errorf("--%s calls a gRPC method: the built-in demo serves HTTP/1.1; give the paths with --path NAME=URL or -f", name)
		}
	}
	return nil
}

// DemoNeedsNginx is why the demo's plan s cannot start here, or nil: it
// has the nginx path (a resumed demo's that had it) and nginx is not
// installed. found says where nginx is not, in its error (meshes' to
// say, which a sweep may not import); asked only when the plan has the
// path.
func (s *Spec) DemoNeedsNginx(found func() error) error {
	if _, nginx := s.PathByName(DemoNginx); nginx {
		if err := found(); err != nil {
			return fmt.Errorf("the sweep to resume has an nginx path: %w", err)
		}
	}
	return nil
}

// CompleteDemo completes and checks a demo's plan (Demo's, or a saved
// one, with flags over it) before its servers start: checked as any sweep
// with its paths at a placeholder address where the servers will be,
// then each path's URL set to what it will go through (DemoWhere), what
// a dry run prints.
func (s *Spec) CompleteDemo() error {
	for i := range s.Paths {
		s.Paths[i].URL = "http://127.0.0.1"
	}
	if err := s.Complete(); err != nil {
		return fmt.Errorf("the built-in demo with the flags over it: %w", err)
	}
	for i := range s.Paths {
		s.Paths[i].URL = DemoWhere(s.Paths[i].Name)
	}
	return nil
}

// DemoWhere is where the demo's path goes before its servers start, as a
// dry run prints it: the nginx path through nginx, every other (the
// baseline) straight to httpbin.
func DemoWhere(path string) string {
	if path == DemoNginx {
		return "nginx (1 worker) in front of httpbin, started by loadgen"
	}
	return "loadgen's httpbin, started by loadgen"
}

// The built-in sweeps (Spec.Builtin), each started, and resumed, by its
// own command.
const (
	BuiltinDemo = "demo" // loadgen sweep with neither -f nor --path (Demo)
	BuiltinSize = "size" // loadgen size (Sizing)
	BuiltinLab  = "lab"  // loadgen lab: a sweep per protocol in DIR/PROTOCOL (Lab)
)

// Resume is what a resume of a saved sweep, given neither a file nor
// paths, continues.
type Resume int

const (
	ResumePlan    Resume = iota // the sweep's own plan, saved with it
	ResumeDemo                  // the built-in demo
	ResumeBuiltin               // another built-in run (size, lab): its own command continues it
)

// ResumeKind is what resuming saved continues, by its Builtin.
func ResumeKind(saved *Spec) Resume {
	switch saved.Builtin {
	case "":
		return ResumePlan
	case BuiltinDemo:
		return ResumeDemo
	}
	return ResumeBuiltin
}

// ResumeRefusal is why a resume by the command whose built-in sweeps are
// own (BuiltinDemo: loadgen sweep with neither -f nor --path;
// BuiltinSize) cannot continue saved, the sweep saved in dir, or nil. The command continues a
// plan of its own and a plain sweep's; a sweep that another built-in
// command made, that command continues, as the refusal says.
func ResumeRefusal(dir string, saved *Spec, own string) error {
	if saved.Builtin == "" || saved.Builtin == own {
		return nil
	}
	command := saved.Builtin
	at := dir
	switch command {
	case BuiltinDemo:
		command = "sweep" // the demo is loadgen sweep's
	case BuiltinLab:
		at = filepath.Dir(dir) // a protocol's sweep of a lab in DIR/PROTOCOL: the lab resumes DIR
	}
	return fmt.Errorf("--resume: %s holds a loadgen %s run: continue it with %s", dir, saved.Builtin, ResumeCommand(command, nil, at))
}

// SavedFor is the plan saved in dir (Saved) for a resume by the command
// whose built-in sweeps are own (BuiltinDemo, BuiltinSize), refused when
// another built-in command made it (ResumeRefusal).
func SavedFor(dir, own string) (*Spec, error) {
	saved, err := Saved(dir)
	if err != nil {
		return nil, err
	}
	if err := ResumeRefusal(dir, saved, own); err != nil {
		return nil, err
	}
	return saved, nil
}

// Origin is what loadgen sweep builds its plan on, decided before
// anything starts for it. The results directory dir is refused first when
// it holds a sweep the run does not resume (CheckOut). With a file or
// paths of its own (named), the plan is theirs: saved is nil, demo false.
// Without, it is the built-in demo (demo true); on a resume, the plan
// saved in dir (SavedFor BuiltinDemo): the demo's (demo true) or a plain
// sweep's, which the flags go over as over a file (demo false).
func Origin(dir string, resume, named bool) (saved *Spec, demo bool, err error) {
	if err := CheckOut(dir, resume); err != nil {
		return nil, false, err
	}
	if named {
		return nil, false, nil
	}
	if !resume {
		return nil, true, nil
	}
	if saved, err = SavedFor(dir, BuiltinDemo); err != nil {
		return nil, false, err
	}
	return saved, ResumeKind(saved) == ResumeDemo, nil
}
