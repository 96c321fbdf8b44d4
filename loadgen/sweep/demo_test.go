package sweep

import (
	"reflect"
	"testing"
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
