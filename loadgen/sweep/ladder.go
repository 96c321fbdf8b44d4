// Package sweep turns a sweep specification — paths × a connection/thread
// ladder × payload sizes × repeats — into a plan of engine runs, runs it
// into a results directory that survives crashes, and resumes it.
package sweep

import (
	"fmt"
	"math/bits"
	"regexp"
	"strconv"
	"strings"

	"loadgen/internal/units"
)

// Rung is one step of the connection/thread ladder: c connections over t
// threads, as "c4t4".
type Rung struct {
	Connections int
	Threads     int
}

func (r Rung) String() string { return fmt.Sprintf("c%dt%d", r.Connections, r.Threads) }

var rungRE = regexp.MustCompile(`^c(\d{1,6})t(\d{1,6})$`)

// ParseRung reads "c4t4" (or "c4": threads = connections).
func ParseRung(s string) (Rung, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	if m := rungRE.FindStringSubmatch(s); m != nil {
		c, _ := strconv.Atoi(m[1])
		t, _ := strconv.Atoi(m[2])
		return checkRung(Rung{c, t}, s)
	}
	if strings.HasPrefix(s, "c") {
		if c, err := strconv.Atoi(s[1:]); err == nil && len(s) <= 7 {
			return checkRung(Rung{c, c}, s)
		}
	}
	return Rung{}, fmt.Errorf("ladder step %q: want cNtM, e.g. c4t4", s)
}

func checkRung(r Rung, s string) (Rung, error) {
	switch {
	case r.Connections < 1 || r.Threads < 1:
		return r, fmt.Errorf("ladder step %q: connections and threads must be at least 1", s)
	case r.Threads > r.Connections:
		return r, fmt.Errorf("ladder step %q: more threads than connections", s)
	}
	return r, nil
}

// ParseLadder reads a ladder: "c1t1..c128t128" doubles connections and
// threads from the first step to the last (c1t1 c2t2 c4t4 … c128t128); a
// comma- or space-separated list names the steps ("c1t1,c4t4,c16t16").
func ParseLadder(s string) ([]Rung, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("empty ladder: want e.g. c1t1..c128t128 or c1t1,c4t4")
	}
	if from, to, ok := strings.Cut(s, ".."); ok {
		a, err := ParseRung(from)
		if err != nil {
			return nil, err
		}
		b, err := ParseRung(to)
		if err != nil {
			return nil, err
		}
		return doubling(a, b, s)
	}
	var out []Rung
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		r, err := ParseRung(f)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// doubling lists a..b, connections and threads doubling together at every
// step.
func doubling(a, b Rung, s string) ([]Rung, error) {
	steps := func(from, to int) (int, bool) {
		if to < from || to%from != 0 {
			return 0, false
		}
		q := to / from
		if q&(q-1) != 0 {
			return 0, false
		}
		return bits.TrailingZeros(uint(q)), true
	}
	nc, okc := steps(a.Connections, b.Connections)
	nt, okt := steps(a.Threads, b.Threads)
	if !okc || !okt {
		return nil, fmt.Errorf("ladder %q: each end must be the other doubled a whole number of times (e.g. c1t1..c128t128)", s)
	}
	if nc != nt {
		return nil, fmt.Errorf("ladder %q: connections double %d times but threads %d: they must double together", s, nc, nt)
	}
	out := make([]Rung, 0, nc+1)
	for i := 0; i <= nc; i++ {
		out = append(out, Rung{a.Connections << i, a.Threads << i})
	}
	return out, nil
}

// ParseSize reads a payload size: "100", "100B", "1KiB", "1k", "1MiB",
// "1MB" (binary: 1 KiB = 1 KB = 1024 bytes, as payload tables use), up to
// 1 GiB.
func ParseSize(s string) (int, error) {
	n, err := units.ParseBytes(s)
	if err != nil {
		return 0, fmt.Errorf("payload %w", err)
	}
	if n > 1<<30 {
		return 0, fmt.Errorf("payload %q: at most 1GiB", s)
	}
	return int(n), nil
}

// ParseMessageSize reads, as ParseSize, a size that must be 1 byte or
// more (a message's, a write's), given by flag, which the error names:
// `--size "0": want a size of 1 B or more`.
func ParseMessageSize(flag, s string) (int, error) {
	n, err := ParseSize(s)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%s %q: want a size of 1 B or more (%v)", flag, s, err)
	case n < 1:
		return 0, fmt.Errorf("%s %q: want a size of 1 B or more", flag, s)
	}
	return n, nil
}

// FormatSize prints a size the way ParseSize reads it: 100B, 1KiB, 1MiB.
func FormatSize(n int) string { return units.FormatBytes(int64(n)) }
