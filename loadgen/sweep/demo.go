package sweep

import (
	"errors"
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
		Builtin:  "demo",
	}
	if nginx {
		spec.Paths = append(spec.Paths, Path{Name: DemoNginx})
	}
	return spec
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
