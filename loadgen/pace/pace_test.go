package pace

import (
	"testing"
	"time"
)

func TestConstant(t *testing.T) {
	p := Constant{PerSec: 2000}
	for _, tc := range []struct {
		i    uint64
		want time.Duration
	}{{0, 0}, {1, 500 * time.Microsecond}, {2000, time.Second}, {6000, 3 * time.Second}} {
		got, ok := p.Intended(tc.i)
		if !ok || got != tc.want {
			t.Errorf("Intended(%d) = %v %v, want %v", tc.i, got, ok, tc.want)
		}
	}
	if _, ok := (Constant{}).Intended(0); ok {
		t.Error("a zero rate must have no schedule")
	}
}

func TestRamp(t *testing.T) {
	// 0 → 1000/s over 10 s: N(t) = 50 t², so request 5000 is due at 10 s,
	// request 1250 at 5 s; after the ramp, 1000/s.
	p := Ramp{From: 0, To: 1000, Over: 10 * time.Second}
	for _, tc := range []struct {
		i    uint64
		want time.Duration
	}{{0, 0}, {1250, 5 * time.Second}, {5000, 10 * time.Second}, {6000, 11 * time.Second}} {
		got, ok := p.Intended(tc.i)
		if d := got - tc.want; !ok || d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("Intended(%d) = %v, want %v", tc.i, got, tc.want)
		}
	}
	if r := p.Rate(5 * time.Second); r != 500 {
		t.Errorf("Rate(5s) = %v, want 500", r)
	}
	// A flat ramp is a constant.
	flat := Ramp{From: 100, To: 100, Over: time.Second}
	if got, _ := flat.Intended(50); got != 500*time.Millisecond {
		t.Errorf("flat ramp Intended(50) = %v", got)
	}
}

func TestStep(t *testing.T) {
	// 100/s for 1 s, 200/s for 1 s, then held at 250/s (max).
	p := Step{Start: 100, Step: 100, Max: 250, Every: time.Second}
	for _, tc := range []struct {
		i    uint64
		want time.Duration
	}{{0, 0}, {99, 990 * time.Millisecond}, {100, time.Second}, {300, 2 * time.Second}, {550, 3 * time.Second}} {
		got, ok := p.Intended(tc.i)
		if d := got - tc.want; !ok || d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("Intended(%d) = %v, want %v", tc.i, got, tc.want)
		}
	}
	if r := p.Rate(1500 * time.Millisecond); r != 200 {
		t.Errorf("Rate(1.5s) = %v, want 200", r)
	}
}

// Every pacer's schedule must never go back in time.
func TestMonotone(t *testing.T) {
	for _, p := range []Pacer{Constant{333}, Ramp{10, 5000, 3 * time.Second}, Ramp{5000, 10, 3 * time.Second}, Step{50, 70, 0, 300 * time.Millisecond}} {
		var last time.Duration
		for i := uint64(0); i < 20000; i++ {
			d, ok := p.Intended(i)
			if !ok {
				break
			}
			if d < last {
				t.Fatalf("%#v: Intended(%d) = %v < %v", p, i, d, last)
			}
			last = d
		}
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Pacer
	}{
		{"2000", Constant{2000}},
		{"0.5", Constant{0.5}},
		{"ramp:100-5000/30s", Ramp{100, 5000, 30 * time.Second}},
		{"step:1000+500/5s", Step{Start: 1000, Step: 500, Every: 5 * time.Second}},
		{"step:1000+500/5s,max=8000", Step{Start: 1000, Step: 500, Max: 8000, Every: 5 * time.Second}},
	} {
		got, err := Parse(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("Parse(%q) = %#v, %v; want %#v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "-5", "0", "abc", "2000abc", "NaN", "Inf", "ramp:5-0/1s", "ramp:1-5/xs", "step:0+1/1s", "step:1+1/0s", "step:1+1/1s,min=3"} {
		if p, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) = %#v, want an error", bad, p)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"2000", "ramp:100-5000/30s", "step:1000+500/5s,max=8000", "-1", "step:1+0/1ns"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			return
		}
		var last time.Duration
		for i := uint64(0); i < 64; i++ {
			d, ok := p.Intended(i)
			if !ok {
				return
			}
			if d < last || d < 0 {
				t.Fatalf("%q: Intended(%d) = %v after %v", s, i, d, last)
			}
			last = d
		}
	})
}

// A pacer's String is the spec Parse reads back, so a result records the
// schedule as asked.
func TestStringRoundTrip(t *testing.T) {
	for _, spec := range []string{"2000", "0.5", "ramp:100-5000/30s", "ramp:0-400/1s", "step:1000+500/5s", "step:1000+500/5s,max=8000"} {
		p, err := Parse(spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.String(); got != spec {
			t.Errorf("Parse(%q).String() = %q", spec, got)
		}
	}
}

// Rates take SI suffixes and durations plain seconds, as every flag does.
func TestParseUnits(t *testing.T) {
	for spec, want := range map[string]Pacer{
		"1.5k":                  Constant{PerSec: 1500},
		"ramp:1k-5k/30":         Ramp{From: 1000, To: 5000, Over: 30 * time.Second},
		"step:1k+500/5s,max=8k": Step{Start: 1000, Step: 500, Every: 5 * time.Second, Max: 8000},
	} {
		got, err := Parse(spec)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %#v, %v; want %#v", spec, got, err, want)
		}
	}
}
