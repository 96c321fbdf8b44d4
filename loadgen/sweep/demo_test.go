package sweep

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDemoAt: the demo's plan, filled with its servers' addresses, is a
// valid sweep of the baseline (and nginx, where installed) on HTTP/1.1,
// marked as the demo for a resume, its target and proxy watched by pid.
func TestDemoAt(t *testing.T) {
	for _, tc := range []struct {
		name      string
		nginx     bool
		wantPaths []Path
	}{
		{"baseline only", false, []Path{{Name: DemoBaseline, Baseline: true, URL: "http://127.0.0.1:8080"}}},
		{"with nginx", true, []Path{{Name: DemoBaseline, Baseline: true, URL: "http://127.0.0.1:8080"},
			{Name: DemoNginx, URL: "http://127.0.0.1:8081", Watch: &Watch{PID: 43, Name: "nginx"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Demo(tc.nginx)
			if err := s.DemoAt("127.0.0.1:8080", 42, "http://127.0.0.1:8081", 43); err != nil {
				t.Fatalf("DemoAt: %v", err)
			}
			if !reflect.DeepEqual(s.Paths, tc.wantPaths) {
				t.Errorf("paths %+v, want %+v", s.Paths, tc.wantPaths)
			}
			if s.Target == nil || s.Target.PID != 42 || s.Builtin != "demo" || s.Protocol != "http1" || s.Endpoint != DefaultEndpoint {
				t.Errorf("target %+v builtin %q protocol %q endpoint %q", s.Target, s.Builtin, s.Protocol, s.Endpoint)
			}
			if got, want := len(s.Plan()), len(s.Ladder)*len(s.Payloads)*len(tc.wantPaths); got != want || got == 0 {
				t.Errorf("%d steps, want %d", got, want)
			}
		})
	}
	s := Demo(false)
	s.Paths = nil
	if err := s.DemoAt("127.0.0.1:8080", 42, "", 0); err == nil {
		t.Error("a plan without its baseline was filled")
	}
}

func TestDemoRefuses(t *testing.T) {
	for _, tc := range []struct {
		given    []string
		protocol string
		want     string
	}{
		{nil, "http1", ""},
		{[]string{"ladder", "payloads", "duration", "rate", "endpoint"}, "http1", ""},
		{[]string{"protocol"}, "http1", ""},
		{[]string{"watch"}, "http1", "--watch needs --path: the built-in demo watches its own processes"},
		{[]string{"target-watch"}, "http1", "--target-watch needs --path: the built-in demo watches its own processes"},
		{[]string{"watch", "target-watch"}, "http1", "--watch needs --path: the built-in demo watches its own processes"},
		{[]string{"protocol"}, "grpc", "-p grpc: the built-in demo serves HTTP/1.1 (loadgen's httpbin, nginx in front of it): give the paths with --path NAME=URL or -f for another protocol"},
		{[]string{"data"}, "http1", "--data calls a gRPC method: the built-in demo serves HTTP/1.1; give the paths with --path NAME=URL or -f"},
		{[]string{"protoset", "call"}, "http1", "--call calls a gRPC method: the built-in demo serves HTTP/1.1; give the paths with --path NAME=URL or -f"},
	} {
		err := DemoRefuses(func(name string) bool { return slices.Contains(tc.given, name) }, tc.protocol)
		if got := fmt.Sprint(err); (tc.want == "" && err != nil) || (tc.want != "" && got != tc.want) {
			t.Errorf("DemoRefuses(%v, %s) = %v, want %q", tc.given, tc.protocol, err, tc.want)
		}
	}
}

// TestCompleteDemo: a demo's plan is checked as any sweep, then its paths
// say where its servers will be (the nginx path through nginx, the
// baseline straight to httpbin); a plan the flags broke is refused as
// the demo's.
func TestCompleteDemo(t *testing.T) {
	const (
		httpbin = "loadgen's httpbin, started by loadgen"
		nginx   = "nginx (1 worker) in front of httpbin, started by loadgen"
	)
	for _, tc := range []struct {
		name  string
		nginx bool
		want  []string
	}{
		{"baseline only", false, []string{httpbin}},
		{"with nginx", true, []string{httpbin, nginx}},
	} {
		s := Demo(tc.nginx)
		if err := s.CompleteDemo(); err != nil {
			t.Fatalf("%s: CompleteDemo: %v", tc.name, err)
		}
		var got []string
		for _, p := range s.Paths {
			got = append(got, p.URL)
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: paths go to %q, want %q", tc.name, got, tc.want)
		}
	}
	for path, want := range map[string]string{DemoBaseline: httpbin, DemoNginx: nginx, "other": httpbin} {
		if got := DemoWhere(path); got != want {
			t.Errorf("DemoWhere(%q) = %q, want %q", path, got, want)
		}
	}
	s := Demo(false)
	s.Repeats = -1
	if err := s.CompleteDemo(); err == nil || !strings.HasPrefix(err.Error(), "the built-in demo with the flags over it: ") {
		t.Errorf("CompleteDemo of a broken plan = %v", err)
	}
}

func TestResumeKind(t *testing.T) {
	for builtin, want := range map[string]Resume{"": ResumePlan, "demo": ResumeDemo, "size": ResumeBuiltin, "lab": ResumeBuiltin} {
		if got := ResumeKind(&Spec{Builtin: builtin}); got != want {
			t.Errorf("ResumeKind(%q) = %v, want %v", builtin, got, want)
		}
	}
}

// TestResumeRefusal: sweep (the demo's) and size resume their own plans
// and a plain sweep's; another built-in command's sweep is refused with
// the command that continues it (a lab from its directory, not a
// protocol's).
func TestResumeRefusal(t *testing.T) {
	for _, tc := range []struct {
		dir, builtin, own string
		want              string
	}{
		{"out", "", "demo", "<nil>"},
		{"out", "demo", "demo", "<nil>"},
		{"out", "", "size", "<nil>"},
		{"out", "size", "size", "<nil>"},
		{"out", "size", "demo", "--resume: out holds a loadgen size run: continue it with loadgen size -o out --resume"},
		{"res/lab/tcp-rr", "lab", "demo", "--resume: res/lab/tcp-rr holds a loadgen lab run: continue it with loadgen lab -o res/lab --resume"},
		{"my out", "size", "demo", "--resume: my out holds a loadgen size run: continue it with loadgen size -o 'my out' --resume"},
		{"out", "demo", "size", "--resume: out holds a loadgen demo run: continue it with loadgen sweep -o out --resume"},
		{"it's/http", "lab", "size", `--resume: it's/http holds a loadgen lab run: continue it with loadgen lab -o 'it'\''s' --resume`},
	} {
		if got := fmt.Sprint(ResumeRefusal(tc.dir, &Spec{Builtin: tc.builtin}, tc.own)); got != tc.want {
			t.Errorf("ResumeRefusal(%q, %q, %q) = %q, want %q", tc.dir, tc.builtin, tc.own, got, tc.want)
		}
	}
}

// TestDemoNeedsNginx: a demo's plan with the nginx path cannot start
// where nginx is not installed, in the words of the error that says so
// (nginxingress.Available's, the one every command says); one without
// it never asks.
func TestDemoNeedsNginx(t *testing.T) {
	missing := errors.New("nginx not found on PATH or at /usr/sbin/nginx: apt-get install nginx")
	for _, tc := range []struct {
		plan  bool  // the plan has the nginx path
		found error // where nginx is not
		want  string
	}{
		{true, nil, "<nil>"},
		{false, nil, "<nil>"},
		{false, missing, "<nil>"},
		{true, missing, "the sweep to resume has an nginx path: nginx not found on PATH or at /usr/sbin/nginx: apt-get install nginx"},
	} {
		asked := false
		err := Demo(tc.plan).DemoNeedsNginx(func() error { asked = true; return tc.found })
		if got := fmt.Sprint(err); got != tc.want || (err != nil && !errors.Is(err, missing)) {
			t.Errorf("plan with nginx %v, nginx missing %v: %q, want %q wrapping the missing nginx's", tc.plan, tc.found, got, tc.want)
		}
		if asked != tc.plan {
			t.Errorf("plan with nginx %v: asked whether nginx is installed: %v", tc.plan, asked)
		}
	}
}

// The demo's plan in words, as loadgen sweep's help gives it, is made from
// the plan: its rungs, its payloads with a space before the unit, and
// each step's measured window in seconds.
func TestOutline(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec *Spec
		want string
	}{
		{"demo", Demo(false), "c1t1 c4t4 c16t16 c64t64 × 100 B, 1 KiB × 3 s"},
		{"demo with nginx", Demo(true), "c1t1 c4t4 c16t16 c64t64 × 100 B, 1 KiB × 3 s"},
		{"other", &Spec{Ladder: Ladder{{2, 1}}, Payloads: Payloads{0, 1 << 20, 1500}, Duration: Duration(1500 * time.Millisecond)}, "c2t1 × 0 B, 1 MiB, 1500 B × 1.5 s"},
	} {
		if got := tc.spec.outline(); got != tc.want {
			t.Errorf("%s: outline %q, want %q", tc.name, got, tc.want)
		}
	}
	if got, want := DemoOutline(), Demo(false).outline(); got != want {
		t.Errorf("DemoOutline() = %q, want the demo's plan %q", got, want)
	}
}
