package loadgen_test

import (
	"testing"
	"time"

	"loadgen/loadgen"
	"loadgen/loadgen/pace"
	"loadgen/results"
)

// Validate is the one check of a run's configuration: its errors are
// the CLI's, word for word (cmd/loadgen prints them as they are).
func TestValidateMessages(t *testing.T) {
	sched, err := pace.Parse("1-4/1s")
	if err != nil {
		t.Fatal(err)
	}
	stages, ok := sched.(*pace.Stages)
	if !ok {
		t.Fatalf("pace.Parse(1-4/1s) = %T, want stages", sched)
	}
	for _, tc := range []struct {
		name string
		mut  func(*loadgen.Config)
		want string // "" for valid
	}{
		{"valid", func(*loadgen.Config) {}, ""},
		{"timeout 0 is the default", func(c *loadgen.Config) { c.Timeout = 0 }, ""},
		{"streams 0 is the default", func(c *loadgen.Config) { c.Streams = 0 }, ""},
		{"-c 0", func(c *loadgen.Config) { c.Connections = 0 }, "-c must be at least 1, got 0"},
		{"-t 0", func(c *loadgen.Config) { c.Threads = 0 }, "-t must be at least 1, got 0"},
		{"-t > -c", func(c *loadgen.Config) { c.Threads = 4 },
			"-t 4 is more than -c 2: every thread needs at least one connection"},
		{"-n negative", func(c *loadgen.Config) { c.Requests = -1 }, "-n must not be negative, got -1"},
		{"-n negative without -d", func(c *loadgen.Config) { c.Requests, c.Duration = -1, 0 }, "-n must not be negative, got -1"},
		{"--warmup negative", func(c *loadgen.Config) { c.Warmup = results.Duration(-time.Second) }, "--warmup must not be negative, got -1s"},
		{"--timeout negative", func(c *loadgen.Config) { c.Timeout = results.Duration(-time.Second) }, "--timeout must be positive, got -1s"},
		{"--streams negative", func(c *loadgen.Config) { c.Streams = -1 }, "--streams must not be negative, got -1"},
		{"-c stages with -R", func(c *loadgen.Config) { c.ConnSchedule, c.Rate = stages, 100 },
			"-c 1-4/1s is a closed loop's connection schedule: not with -R (an open loop's stages go in -R)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := loadgen.Config{}
			c.Connections, c.Threads, c.Duration = 2, 1, results.Duration(time.Second)
			tc.mut(&c)
			err := c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want):
				t.Errorf("Validate() = %v, want %q", err, tc.want)
			}
		})
	}
}

// A timeout the user gave must be positive: the CLI's 0 given and
// Validate's negative one are refused in one message.
func TestCheckTimeout(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string // "" for valid
	}{
		{time.Second, ""},
		{time.Nanosecond, ""},
		{0, "--timeout must be positive, got 0s"},
		{-time.Second, "--timeout must be positive, got -1s"},
	} {
		err := loadgen.CheckTimeout(tc.d)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want) {
			t.Errorf("CheckTimeout(%v) = %v, want %q", tc.d, err, tc.want)
		}
	}
}
