package main

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// A spinner at 1,000 loops/ms that counts 400/ms for the 2 s of a run lost
// 60% of that CPU: 1.2 s.
func TestTaken(t *testing.T) {
	var b strings.Builder
	const ms = int64(1e6)
	n := int64(0)
	for at := int64(0); at <= 6000*ms; at += 20 * ms {
		fmt.Fprintf(&b, "%d %d\n", at, n)
		if at >= 2000*ms && at < 4000*ms {
			n += 20 * 400
		} else {
			n += 20 * 1000
		}
	}
	s, err := readSamples(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	got, err := taken(s, 2000*ms, 4000*ms, 1500*ms)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.Seconds-1.2) > 1e-9 || got.Rate != 1e6 || got.Drift != 0 {
		t.Errorf("taken %+v: want 1.2 s at 1e6 loops/s, no drift", got)
	}
	// Between samples the count is interpolated.
	if n, ok := loopsAt(s, 10*ms); !ok || n != 10000 {
		t.Errorf("loops at 10 ms: %v %v, want 10000", n, ok)
	}
	if _, err := taken(s, 2000*ms, 5000*ms, 1500*ms); err == nil {
		t.Error("a baseline past the samples' end was not refused")
	}
}

func TestReadSamplesRefuses(t *testing.T) {
	for _, in := range []string{"1 2 3\n", "x 1\n", "5 10\n4 11\n", "5 10\n6 9\n"} {
		if _, err := readSamples(strings.NewReader(in)); err == nil {
			t.Errorf("%q: no error", in)
		}
	}
}

func FuzzReadSamples(f *testing.F) {
	f.Add("1 2\n3 4\n")
	f.Add("")
	f.Add("0 0\n10 10\n20 20\n30 30\n40 40\n")
	f.Add("0 0\n10 0\n20 5\n30 30\n40 40\n")
	f.Fuzz(func(t *testing.T, in string) {
		s, err := readSamples(strings.NewReader(in))
		if err != nil || len(s) < 2 {
			return
		}
		// A window inside the samples, a quarter of their span on each
		// side for the baseline, so the arithmetic runs.
		first, last := s[0].at, s[len(s)-1].at
		around := (last - first) / 4
		from, to := first+around, last-around
		if around <= 0 || to <= from {
			return
		}
		tk, err := taken(s, from, to, around)
		if err != nil {
			return
		}
		// Counts never go back, so the spinner cannot lose more than the
		// window, and every figure is a number.
		window := float64(to-from) / 1e9
		if tk.Seconds > window*(1+1e-9) || tk.Rate <= 0 {
			t.Fatalf("taken %+v over a %.9f s window", tk, window)
		}
		for _, v := range []float64{tk.Seconds, tk.Rate, tk.Drift} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("taken %+v: not a number", tk)
			}
		}
	})
}
