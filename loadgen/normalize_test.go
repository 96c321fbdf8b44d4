package loadgen_test

import (
	"testing"
	"time"

	"loadgen/loadgen"
	"loadgen/loadgen/pace"
	"loadgen/results"
)

// Normalize applies `loadgen run`'s defaults that depend on what else was
// given, and only those.
func TestNormalize(t *testing.T) {
	type opts struct {
		conns, threads, streams int
		duration                time.Duration
		method                  string
		slack                   time.Duration
	}
	base := opts{conns: 10, threads: 2, duration: 10 * time.Second, slack: loadgen.DefaultSlack}
	for _, tc := range []struct {
		name  string
		in    func(*opts)
		given loadgen.Given
		want  func(*opts)
		err   string
	}{
		{"as given", func(*opts) {}, loadgen.Given{}, func(*opts) {}, ""},
		{"-t's default clamped to -c", func(o *opts) { o.conns = 1 }, loadgen.Given{},
			func(o *opts) { o.conns, o.threads = 1, 1 }, ""},
		{"-t given is kept (Validate refuses it)", func(o *opts) { o.conns = 1 }, loadgen.Given{Threads: true},
			func(o *opts) { o.conns = 1 }, ""},
		{"-n alone: no duration", func(*opts) {}, loadgen.Given{Requests: true}, func(o *opts) { o.duration = 0 }, ""},
		{"-n with -d: both", func(*opts) {}, loadgen.Given{Requests: true, Duration: true}, func(*opts) {}, ""},
		{"-d alone", func(*opts) {}, loadgen.Given{Duration: true}, func(*opts) {}, ""},
		{"-m a number: streams", func(o *opts) { o.method = "8" }, loadgen.Given{}, func(o *opts) { o.method, o.streams = "", 8 }, ""},
		{"-m a method", func(o *opts) { o.method = "POST" }, loadgen.Given{}, func(o *opts) { o.method = "POST" }, ""},
		{"-m a method with --streams", func(o *opts) { o.method, o.streams = "POST", 4 }, loadgen.Given{Streams: true},
			func(o *opts) { o.method, o.streams = "POST", 4 }, ""},
		{"-m a number and --streams", func(o *opts) { o.method, o.streams = "8", 4 }, loadgen.Given{Streams: true}, nil,
			"-m 8 and --streams both set the streams per connection: use one"},
		{"--slack 0 given: none", func(o *opts) { o.slack = 0 }, loadgen.Given{Slack: true}, func(o *opts) { o.slack = -1 }, ""},
		{"slack 0 not given: the default", func(o *opts) { o.slack = 0 }, loadgen.Given{}, func(o *opts) { o.slack = 0 }, ""},
		{"--slack given kept", func(o *opts) { o.slack = time.Millisecond }, loadgen.Given{Slack: true},
			func(o *opts) { o.slack = time.Millisecond }, ""},
		{"--slack negative", func(o *opts) { o.slack = -time.Millisecond }, loadgen.Given{Slack: true}, nil,
			"--slack must not be negative, got -1ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := base
			tc.in(&in)
			var c loadgen.Config
			c.Connections, c.Threads, c.Streams = in.conns, in.threads, in.streams
			c.Duration, c.Method, c.Slack = results.Duration(in.duration), in.method, in.slack
			err := c.Normalize(tc.given)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("Normalize() = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Normalize() = %v", err)
			}
			want := in
			tc.want(&want)
			got := opts{c.Connections, c.Threads, c.Streams, c.Duration.D(), c.Method, c.Slack}
			if got != want {
				t.Errorf("Normalize() gave %+v, want %+v", got, want)
			}
		})
	}
}

// Normalize refuses both bodies, and sets the pacer, the connection
// schedule and the duration from -R and -c's stages.
func TestNormalizeLoad(t *testing.T) {
	for _, tc := range []struct {
		name         string
		warmup, dur  time.Duration
		given        loadgen.Given
		pacer, conns string // their String(); "" none
		wantD        time.Duration
		err          string
	}{
		{"no schedule", 0, 10 * time.Second, loadgen.Given{}, "", "", 10 * time.Second, ""},
		{"a rate keeps -d", 0, 10 * time.Second, loadgen.Given{Rate: "100"}, "100", "", 10 * time.Second, ""},
		{"-R stages set -d", 0, 10 * time.Second, loadgen.Given{Rate: "100/5s,200/5s"}, "100/5s,200/5s", "", 10 * time.Second, ""},
		{"-R stages less warm-up", 2 * time.Second, 10 * time.Second, loadgen.Given{Rate: "100/5s,200/5s"}, "100/5s,200/5s", "", 8 * time.Second, ""},
		{"-R stages with -n alone", 0, 0, loadgen.Given{Rate: "100/4s", Requests: true}, "100/4s", "", 4 * time.Second, ""},
		{"-R stages against -d", 0, 7 * time.Second, loadgen.Given{Rate: "100/5s", Duration: true}, "", "", 0,
			"-d 7s: the stages last 5s: leave -d out, the run lasts as long as its stages"},
		{"-R bad", 0, time.Second, loadgen.Given{Rate: "ramp:x"}, "", "", 0,
			`-R: rate "ramp:x": want ramp:FROM-TO/DURATION with TO > 0, e.g. ramp:100-5000/30s`},
		{"-R @file missing", 0, time.Second, loadgen.Given{Rate: "@/nonexistent/stages"}, "", "", 0,
			"-R @/nonexistent/stages: no such file or directory"},
		{"-c stages set -d", 0, 10 * time.Second, loadgen.Given{Conns: "10-20/3s,20/3s"}, "", "10-20/3s,20/3s", 6 * time.Second, ""},
		{"-c stages within warm-up", 6 * time.Second, 0, loadgen.Given{Conns: "10-20/3s,20/3s"}, "", "", 0,
			"--warmup 6s: the stages last 6s in all, warm-up included: nothing would be measured"},
		{"one body", 0, time.Second, loadgen.Given{Body: true}, "", "", time.Second, ""},
		{"both bodies", 0, time.Second, loadgen.Given{Body: true, BodyFile: true}, "", "", 0,
			"--body and --body-file both set the body: use one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c loadgen.Config
			c.Connections, c.Threads = 20, 1
			c.Warmup, c.Duration = results.Duration(tc.warmup), results.Duration(tc.dur)
			tc.given.Threads = true
			err := c.Normalize(tc.given)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("Normalize() = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Normalize() = %v", err)
			}
			if c.Duration.D() != tc.wantD {
				t.Errorf("Duration = %v, want %v", c.Duration.D(), tc.wantD)
			}
			pacer, conns := "", ""
			if c.Pacer != nil {
				pacer = c.Pacer.String()
			}
			if c.ConnSchedule != nil {
				conns = c.ConnSchedule.String()
			}
			if pacer != tc.pacer || conns != tc.conns {
				t.Errorf("Pacer %q, ConnSchedule %q; want %q, %q", pacer, conns, tc.pacer, tc.conns)
			}
		})
	}
}

// Validate refuses a negative Procs in --cpus' words.
func TestValidateProcs(t *testing.T) {
	for _, tc := range []struct {
		procs int
		err   string
	}{{0, ""}, {2, ""}, {-1, "--cpus must not be negative, got -1"}} {
		var c loadgen.Config
		c.Connections, c.Threads, c.Duration, c.Procs = 1, 1, results.Duration(time.Second), tc.procs
		err := c.Validate()
		if (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("Procs %d: Validate() = %v, want %q", tc.procs, err, tc.err)
		}
	}
}

// Normalize puts the open loop's schedule on --arrival and --jitter,
// each checked; a closed loop refuses them naming the one asked.
func TestNormalizeArrival(t *testing.T) {
	for _, tc := range []struct {
		name           string
		rate           float64 // Config.Rate, a library caller's
		given          loadgen.Given
		process, pacer string
		jitter         float64
		err            string
	}{
		{"none", 0, loadgen.Given{Rate: "100"}, "uniform", "100", 0, ""},
		{"poisson", 0, loadgen.Given{Rate: "100", Arrival: "poisson"}, "poisson", "100", 0, ""},
		{"uniform", 0, loadgen.Given{Rate: "100", Arrival: "uniform"}, "uniform", "100", 0, ""},
		{"jitter", 0, loadgen.Given{Rate: "100", Jitter: "10%"}, "uniform", "100", 0.1, ""},
		{"jitter on stages", 0, loadgen.Given{Rate: "100/5s,200/5s", Jitter: "20"}, "uniform", "100/5s,200/5s", 0.2, ""},
		{"poisson on Rate", 100, loadgen.Given{Arrival: "poisson"}, "poisson", "100", 0, ""},
		{"closed loop: --arrival", 0, loadgen.Given{Arrival: "poisson"}, "", "", 0,
			"--arrival paces an open loop: add -R (a rate); a closed loop sends each request when the last answer came"},
		{"closed loop: both", 0, loadgen.Given{Arrival: "uniform", Jitter: "5%"}, "", "", 0,
			"--arrival paces an open loop: add -R (a rate); a closed loop sends each request when the last answer came"},
		{"closed loop: --jitter", 0, loadgen.Given{Jitter: "10%"}, "", "", 0,
			"--jitter paces an open loop: add -R (a rate); a closed loop sends each request when the last answer came"},
		{"bad process first", 0, loadgen.Given{Arrival: "gaussian"}, "", "", 0, `--arrival "gaussian": want uniform or poisson`},
		{"bad jitter first", 0, loadgen.Given{Jitter: "101%"}, "", "", 0,
			`--jitter: jitter "101%": want a percentage of each gap from 0% to 100%, e.g. 10%`},
		{"poisson with jitter", 0, loadgen.Given{Rate: "100", Arrival: "poisson", Jitter: "10%"}, "", "", 0,
			"--arrival poisson --jitter 10%: jitter varies the uniform schedule's gaps; Poisson's are random already: use one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c loadgen.Config
			c.Connections, c.Threads, c.Duration, c.Rate = 1, 1, results.Duration(10*time.Second), tc.rate
			err := c.Normalize(tc.given)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("Normalize() = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Normalize() = %v", err)
			}
			if c.Pacer == nil {
				t.Fatal("no Pacer")
			}
			process, jitter := pace.Arrival(c.Pacer)
			if process != tc.process || jitter != tc.jitter || c.Pacer.String() != tc.pacer {
				t.Errorf("Pacer %q on %s, jitter %v; want %q on %s, jitter %v", c.Pacer, process, jitter, tc.pacer, tc.process, tc.jitter)
			}
		})
	}
}
