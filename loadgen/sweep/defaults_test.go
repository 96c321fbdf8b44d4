package sweep

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

// The flags' defaults are the library's, in the flags' grammar: each
// parses to the plan it stands for (a sweep of flags alone doubles from
// c1t1 to c128t128 over 100 B and 1 KiB in a closed loop; size measures
// c64t2 on a 1 KiB body for 5 s after 1 s of warm-up).
func TestDefaultsParse(t *testing.T) {
	ladder := func(s string) (any, error) { l, err := ParseLadder(s); return Ladder(l), err }
	payloads := func(s string) (any, error) { return ParsePayloads(s) }
	rates := func(s string) (any, error) { return ParseRates(s) }
	size := func(s string) (any, error) { return ParseSize(s) }
	for _, tc := range []struct {
		name  string
		value string
		parse func(string) (any, error)
		want  any
	}{
		{"DefaultLadder", DefaultLadder, ladder, Ladder{{1, 1}, {2, 2}, {4, 4}, {8, 8}, {16, 16}, {32, 32}, {64, 64}, {128, 128}}},
		{"DefaultPayloads", DefaultPayloads, payloads, Payloads{100, 1024}},
		{"DefaultRates", DefaultRates, rates, Rates{0}},
		{"DefaultSizingLadder", DefaultSizingLadder, ladder, Ladder{{64, 2}}},
		{"DefaultSizingPayload", DefaultSizingPayload, size, 1024},
	} {
		got, err := tc.parse(tc.value)
		if err != nil {
			t.Errorf("%s %q: %v", tc.name, tc.value, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %q parses to %v, want %v", tc.name, tc.value, got, tc.want)
		}
	}
	for _, tc := range []struct {
		name  string
		check func(string, time.Duration) error
		d     time.Duration
		want  time.Duration
	}{
		{"DefaultSizingDuration", CheckDuration, DefaultSizingDuration, 5 * time.Second},
		{"DefaultSizingWarmup", CheckWarmup, DefaultSizingWarmup, time.Second},
	} {
		if err := tc.check(tc.name, tc.d); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if tc.d != tc.want {
			t.Errorf("%s = %v, want %v", tc.name, tc.d, tc.want)
		}
	}
	// A sweep of the flags alone, all defaults: the plan the constants say.
	s, err := Overlay(nil, FlagValues{Protocol: DefaultProtocol, Duration: DefaultDuration, Repeats: DefaultRepeats,
		Ladder: DefaultLadder, Payloads: DefaultPayloads, Rates: DefaultRates}, func(string) bool { return false })
	if err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(s.Ladder, s.Payloads, s.Rates); got != "[c1t1 c2t2 c4t4 c8t8 c16t16 c32t32 c64t64 c128t128] [100 1024] [0]" {
		t.Errorf("the flags' defaults overlaid: %s", got)
	}
}
