package loadgen_test

import (
	"testing"
	"time"

	"loadgen/loadgen"
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
