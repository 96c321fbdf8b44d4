package sweep

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestOverlay is the rule of which value wins, a plan's (a sweep file's,
// a resume's saved) or the flags': without a base every flag, its default
// when not given; over a base only the flags given; --payloads' default
// only without a base and without --call; --trim-start and --trim-end
// only when given.
func TestOverlay(t *testing.T) {
	// The flags' defaults, as loadgen sweep registers them.
	defaults := func() FlagValues {
		return FlagValues{
			Protocol: DefaultProtocol, Duration: DefaultDuration, Timeout: 10 * time.Second,
			Repeats: DefaultRepeats, Ladder: "c1t1..c4t4", Rates: "0", Endpoint: DefaultEndpoint, Payloads: "100,1KiB",
		}
	}
	file := func() *Spec {
		return &Spec{
			Paths:  []Path{{Name: "baseline", URL: "http://127.0.0.1:1"}},
			Ladder: Ladder{{Connections: 8, Threads: 2}}, Payloads: Payloads{5}, Protocol: "h2c",
			Duration: Duration(3 * time.Second), Repeats: 3, Rates: Rates{100},
		}
	}
	d := func(v time.Duration) *Duration { x := Duration(v); return &x }
	for _, tc := range []struct {
		name    string
		base    *Spec
		v       func(*FlagValues)
		changed []string
		want    func(*Spec) // the fields the case is about, set on a copy of the result's
		wantErr string
	}{
		{
			name: "no base: every flag, defaults too",
			want: func(s *Spec) {
				s.Protocol, s.Duration, s.Timeout, s.Repeats = DefaultProtocol, Duration(DefaultDuration), Duration(10*time.Second), DefaultRepeats
				s.Ladder = Ladder{{1, 1}, {2, 2}, {4, 4}}
				s.Rates, s.Payloads = Rates{0}, Payloads{100, 1024}
				s.Endpoint = "" // --endpoint's default is the spec's own, not set here
			},
		},
		{
			name:    "base: only the flags given",
			base:    file(),
			v:       func(v *FlagValues) { v.Ladder, v.Duration = "c16t4", 7*time.Second },
			changed: []string{"ladder"},
			want: func(s *Spec) {
				*s = *file()
				s.Ladder = Ladder{{16, 4}} // given; -d was not: the file's 3s stays
			},
		},
		{
			name:    "base: every flag given wins",
			base:    file(),
			v:       func(v *FlagValues) { v.Protocol, v.Repeats, v.Rates, v.Payloads = "http1", 2, "0,1k", "1MiB" },
			changed: []string{"protocol", "repeats", "rate", "payloads"},
			want: func(s *Spec) {
				*s = *file()
				s.Protocol, s.Repeats, s.Rates, s.Payloads = "http1", 2, Rates{0, 1000}, Payloads{1 << 20}
			},
		},
		{
			name: "no base, --call: no --payloads default",
			v:    func(v *FlagValues) { v.Protocol, v.Call = "grpc", "pkg.S/M" },
			want: func(s *Spec) { s.Payloads = nil },
		},
		{
			name:    "no base, --call and --payloads given",
			v:       func(v *FlagValues) { v.Protocol, v.Call, v.Payloads = "grpc", "pkg.S/M", "7" },
			changed: []string{"protocol", "call", "payloads"},
			want:    func(s *Spec) { s.Payloads = Payloads{7} },
		},
		{
			name: "base: its payloads, not --payloads' default",
			base: file(),
			want: func(s *Spec) { s.Payloads = Payloads{5} },
		},
		{
			name: "trim flags not given: none, even without a base",
			v:    func(v *FlagValues) { v.TrimStart, v.TrimEnd = time.Second, time.Second },
			want: func(s *Spec) { s.TrimStart, s.TrimEnd = nil, nil },
		},
		{
			name:    "trim flags given, 0 too",
			v:       func(v *FlagValues) { v.TrimStart, v.TrimEnd = 2*time.Second, 0 },
			changed: []string{"trim-start", "trim-end"},
			want:    func(s *Spec) { s.TrimStart, s.TrimEnd = d(2*time.Second), d(0) },
		},
		{
			name: "base: its trims stay when not given",
			base: func() *Spec { s := file(); s.TrimStart = d(time.Second); return s }(),
			want: func(s *Spec) { s.TrimStart, s.TrimEnd = d(time.Second), nil },
		},
		{
			name: "a watch names a path the command line gives, whatever the order",
			v: func(v *FlagValues) {
				v.Watches = []string{"nginx=name:nginx"}
				v.Paths = []string{"baseline=http://127.0.0.1:1", "nginx=http://127.0.0.1:2"}
			},
			want: func(s *Spec) {
				s.Paths = []Path{{Name: "baseline", URL: "http://127.0.0.1:1"}, {Name: "nginx", URL: "http://127.0.0.1:2", Watch: &Watch{Process: "nginx"}}}
			},
		},
		{name: "no base: --repeats checked", v: func(v *FlagValues) { v.Repeats = 0 }, wantErr: "--repeats must be at least 1, got 0"},
		{name: "base: --repeats not given is not checked", base: file(), v: func(v *FlagValues) { v.Repeats = 0 }, want: func(s *Spec) { s.Repeats = 3 }},
		{name: "bad ladder", v: func(v *FlagValues) { v.Ladder = "x" }, wantErr: "--ladder: "},
		{name: "bad payloads", v: func(v *FlagValues) { v.Payloads = "-1" }, wantErr: "--payloads: "},
		{name: "--jitter on closed loop", v: func(v *FlagValues) { v.Jitter = "10%" }, changed: []string{"jitter"}, wantErr: "jitter"},
		{name: "--jitter with a rate", v: func(v *FlagValues) { v.Jitter, v.Rates = "10%", "100" }, changed: []string{"jitter", "rate"}, want: func(s *Spec) { s.JitterPct, s.Rates = 10, Rates{100} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := defaults()
			if tc.v != nil {
				tc.v(&v)
			}
			got, err := Overlay(tc.base, v, func(name string) bool { return slices.Contains(tc.changed, name) })
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := *got
			tc.want(&want)
			if !reflect.DeepEqual(*got, want) {
				t.Errorf("got  %+v\nwant %+v", *got, want)
			}
		})
	}
}
