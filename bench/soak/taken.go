package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// sample is one line of the spinner's: when, and its loops so far.
type sample struct{ at, loops int64 }

func readSamples(r io.Reader) ([]sample, error) {
	var s []sample
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return nil, fmt.Errorf("line %d: want \"unix-ns loops\", got %q", line, sc.Text())
		}
		at, err1 := strconv.ParseInt(f[0], 10, 64)
		n, err2 := strconv.ParseInt(f[1], 10, 64)
		if err := errors.Join(err1, err2); err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		if len(s) > 0 && (at <= s[len(s)-1].at || n < s[len(s)-1].loops) {
			return nil, fmt.Errorf("line %d: time or count went back", line)
		}
		s = append(s, sample{at, n})
	}
	return s, sc.Err()
}

// loopsAt is the count at t, interpolated between the samples around it.
func loopsAt(s []sample, t int64) (float64, bool) {
	i := sort.Search(len(s), func(i int) bool { return s[i].at >= t })
	if i == len(s) || (i == 0 && s[0].at > t) {
		return 0, false
	}
	if s[i].at == t {
		return float64(s[i].loops), true
	}
	a, b := s[i-1], s[i]
	return float64(a.loops) + float64(b.loops-a.loops)*float64(t-a.at)/float64(b.at-a.at), true
}

// Taken is what a window cost the spinner.
type Taken struct {
	Seconds float64 // CPU-seconds the spinner lost in the window
	Rate    float64 // its baseline, loops a second (mean of before and after)
	Drift   float64 // after's baseline over before's, minus 1: how far to trust Seconds
}

// taken is the CPU the spinner in s lost between from and to (unix ns):
// the window's length less the loops it counted there at its baseline
// rate, which is its rate over `around` before from and after to.
func taken(s []sample, from, to, around int64) (Taken, error) {
	rate := func(a, b int64) (float64, error) {
		x, ok1 := loopsAt(s, a)
		y, ok2 := loopsAt(s, b)
		if !ok1 || !ok2 {
			return 0, fmt.Errorf("the spinner's samples do not cover %d..%d: was it running the whole time?", a, b)
		}
		return (y - x) / (float64(b-a) / 1e9), nil
	}
	before, err := rate(from-around, from)
	if err != nil {
		return Taken{}, err
	}
	after, err := rate(to, to+around)
	if err != nil {
		return Taken{}, err
	}
	in, err := rate(from, to)
	if err != nil {
		return Taken{}, err
	}
	if before <= 0 || after <= 0 {
		// Drift (after/before) would be infinite, the baseline half a rate.
		return Taken{}, errors.New("the spinner did not run before or after the window: is the CPU busy with something else?")
	}
	base := (before + after) / 2
	secs := float64(to-from) / 1e9
	return Taken{Seconds: secs * (1 - in/base), Rate: base, Drift: after/before - 1}, nil
}
