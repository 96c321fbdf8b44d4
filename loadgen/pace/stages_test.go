package pace

import (
	"math"
	"strings"
	"testing"
	"time"
)

func mustStages(t testing.TB, spec string) *Stages {
	t.Helper()
	p, err := Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	s, ok := p.(*Stages)
	if !ok {
		t.Fatalf("Parse(%q) = %T, want stages", spec, p)
	}
	return s
}

// 0 → 1000/s over 10 s (5000 requests), 1000/s for 5 s (5000), 1000 → 0
// over 2 s (1000), then nothing.
func TestStages(t *testing.T) {
	s := mustStages(t, "0-1k/10s,1k/5s,1k-0/2s")
	if s.Total() != 17*time.Second {
		t.Errorf("Total = %v", s.Total())
	}
	for _, tc := range []struct {
		i    uint64
		want time.Duration
	}{{0, 0}, {1250, 5 * time.Second}, {5000, 10 * time.Second}, {7500, 12500 * time.Millisecond}, {10000, 15 * time.Second}, {10750, 16 * time.Second}} {
		got, ok := s.Intended(tc.i)
		if d := got - tc.want; !ok || d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("Intended(%d) = %v %v, want %v", tc.i, got, ok, tc.want)
		}
	}
	if _, ok := s.Intended(11000); ok {
		t.Error("the schedule must end with its stages (11000 requests)")
	}
	for at, want := range map[time.Duration]float64{0: 0, 5 * time.Second: 500, 12 * time.Second: 1000, 16 * time.Second: 500, 17 * time.Second: 0, 18 * time.Second: 0} {
		if got := s.Rate(at); math.Abs(got-want) > 1e-9 {
			t.Errorf("Rate(%v) = %v, want %v", at, got, want)
		}
	}
	for at, want := range map[time.Duration]int{0: 0, 9 * time.Second: 0, 10 * time.Second: 1, 16 * time.Second: 2, time.Hour: 2} {
		if got := s.StageAt(at); got != want {
			t.Errorf("StageAt(%v) = %d, want %d", at, got, want)
		}
	}
}

// A pause (0/s) sends nothing: the next stage's first request is due when
// it starts.
func TestStagesPause(t *testing.T) {
	s := mustStages(t, "100/1s,0/3s,100/1s")
	for _, tc := range []struct {
		i    uint64
		want time.Duration
	}{{99, 990 * time.Millisecond}, {100, 4 * time.Second}, {150, 4500 * time.Millisecond}} {
		if got, ok := s.Intended(tc.i); !ok || got != tc.want {
			t.Errorf("Intended(%d) = %v %v, want %v", tc.i, got, ok, tc.want)
		}
	}
}

func TestParseStages(t *testing.T) {
	for spec, want := range map[string]string{
		"0-2k/30s,2k/2m,2k-0/10s": "0-2000/30s,2000/2m,2000-0/10s",
		"500/1.5":                 "500/1.5s",
		" 1k/1m30s , 0-10/2s ":    "1000/1m30s,0-10/2s",
	} {
		if got := mustStages(t, spec).String(); got != want {
			t.Errorf("Parse(%q).String() = %q, want %q", spec, got, want)
		}
		if back := mustStages(t, want).String(); back != want {
			t.Errorf("%q reads back as %q", want, back)
		}
	}
	for _, bad := range []string{"0/10s", "1k/0s", "1k/", "/10s", "1k-/10s", "-1k/10s", "1k/10s,", "1k/10s,,2k/1s", "1k/-1s", "abc/1s", "1k-2k-3k/1s", "NaN/1s", "1e3/1s", "1k/10x",
		strings.Repeat("1/1s,", MaxStages) + "1/1s"} {
		if p, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", bad, p)
		}
	}
	// The old forms keep their meaning.
	if p, _ := Parse("ramp:0-100/1s"); p != (Ramp{From: 0, To: 100, Over: time.Second}) {
		t.Errorf("ramp: read as %#v", p)
	}
}

// Poisson arrivals over stages: the requests each stage starts are about
// its share.
func TestStagesPoisson(t *testing.T) {
	s := mustStages(t, "1k/10s,4k/10s")
	p, err := WithArrival(s, Poisson, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	var n [2]int
	for i := uint64(0); ; i++ {
		at, ok := p.Intended(i)
		if !ok {
			break
		}
		n[s.StageAt(at)]++
	}
	// Poisson counts: sd ≈ 100 and 200.
	if math.Abs(float64(n[0])-10000) > 500 || math.Abs(float64(n[1])-40000) > 1000 {
		t.Errorf("%v requests per stage, want about 10000 and 40000", n)
	}
}

func FuzzParseStages(f *testing.F) {
	for _, s := range []string{"0-2k/30s,2k/2m,2k-0/10s", "100/1s,0/3s,100/1s", "1/1ns", "0-1/1s", "5k-0/1.5", "1k/10s,", "0-0/1s,1/1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		p, err := Parse(spec)
		if err != nil {
			return
		}
		s, ok := p.(*Stages)
		if !ok {
			return
		}
		if back, err := Parse(s.String()); err != nil || back.String() != s.String() {
			t.Fatalf("%q: String %q reads back as %v, %v", spec, s.String(), back, err)
		}
		var last time.Duration
		for i := uint64(0); i < 256; i++ {
			d, ok := s.Intended(i)
			if !ok {
				return
			}
			if d < last || d < 0 || d > s.Total() {
				t.Fatalf("%q: Intended(%d) = %v after %v (total %v)", spec, i, d, last, s.Total())
			}
			if r := s.Rate(d); r < 0 || math.IsNaN(r) {
				t.Fatalf("%q: Rate(%v) = %v", spec, d, r)
			}
			last = d
		}
	})
}

// TestStagesWindow checks that a run on stages measures what they leave
// after the warm-up; a warm-up that leaves nothing, or a -d that does not
// end with the last stage, is refused.
func TestStagesWindow(t *testing.T) {
	st, err := Parse("0-100/10s,100/20s") // 30s in all
	if err != nil {
		t.Fatal(err)
	}
	s := st.(*Stages)
	for _, tc := range []struct {
		name      string
		warmup, d time.Duration
		given     bool
		want      time.Duration
		err       string // in the error; "" for none
	}{
		{"stages only", 0, 0, false, 30 * time.Second, ""},
		{"warm-up", 5 * time.Second, 0, false, 25 * time.Second, ""},
		{"-d not given is ignored", 5 * time.Second, 3 * time.Second, false, 25 * time.Second, ""},
		{"-d to the end", 5 * time.Second, 25 * time.Second, true, 25 * time.Second, ""},
		{"warm-up too long", 30 * time.Second, 0, false, 0, "--warmup 30s: the stages last 30s in all"},
		{"-d short", 0, 10 * time.Second, true, 0, "-d 10s: the stages last 30s: leave -d out"},
		{"-d short after warm-up", 5 * time.Second, 10 * time.Second, true, 0, "-d 10s: the stages last 30s, --warmup 5s included"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Window(tc.warmup, tc.d, tc.given)
			switch {
			case tc.err == "" && (err != nil || got != tc.want):
				t.Errorf("Window = %v, %v; want %v", got, err, tc.want)
			case tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)):
				t.Errorf("Window = %v, %v; want an error %q…", got, err, tc.err)
			}
		})
	}
}
