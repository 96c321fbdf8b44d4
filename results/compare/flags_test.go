package compare

import (
	"testing"
	"time"
)

// CheckBaselineFlags: the baseline's flags only with --baseline; the
// default --max-regression filled in.
func TestCheckBaselineFlags(t *testing.T) {
	for _, tc := range []struct {
		name     string
		given    []string
		baseline string
		maxReg   string
		want     string
		err      string
	}{
		{"none", nil, "", "", "10%", ""},
		{"a value kept", nil, "", "5%", "5%", ""},
		{"with a baseline", []string{"max-regression", "judge-contended", "allow-contended"}, "old.json", "5%", "5%", ""},
		{"--max-regression alone", []string{"max-regression"}, "", "5%", "", "--max-regression needs --baseline: the results to compare with"},
		{"--judge-contended alone", []string{"judge-contended"}, "", "", "", "--judge-contended needs --baseline: the results to compare with"},
		{"--allow-contended alone", []string{"allow-contended"}, "", "", "", "--allow-contended needs --baseline: the results to compare with"},
		{"the first named", []string{"allow-contended", "max-regression"}, "", "", "", "--max-regression needs --baseline: the results to compare with"},
		{"another flag", []string{"assert"}, "", "", "10%", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			given := func(name string) bool {
				for _, g := range tc.given {
					if g == name {
						return true
					}
				}
				return false
			}
			got, err := CheckBaselineFlags(given, tc.baseline, tc.maxReg)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("CheckBaselineFlags() = %q, %v; want error %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("CheckBaselineFlags() = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// ParseAbort: --abort-on-fail's companions and refusals, and the
// assertions judged while the load runs.
func TestParseAbort(t *testing.T) {
	live, err := ParseAll([]string{"p99<20ms,cpu<50%"})
	if err != nil {
		t.Fatal(err)
	}
	atEnd, err := ParseAll([]string{"cpu<50%"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		on      bool
		after   time.Duration
		given   string
		findMax bool
		asserts []Assertion
		live    int
		err     string
	}{
		{"off", false, 0, "", false, nil, 0, ""},
		{"off, asserts", false, 0, "", false, live, 0, ""},
		{"--abort-after alone", false, time.Second, "abort-after", false, live, 0, "--abort-after goes with --abort-on-fail"},
		{"--keep-going alone", false, 0, "keep-going", false, live, 0, "--keep-going goes with --abort-on-fail"},
		{"on", true, 0, "", false, live, 1, ""},
		{"on, --abort-after", true, 5 * time.Second, "abort-after", false, live, 1, ""},
		{"with --find-max", true, 0, "", true, live, 0,
			"--abort-on-fail and --find-max: a probe is judged by --slo at its end (the search needs its figures)"},
		{"no --assert", true, 0, "", false, nil, 0,
			"--abort-on-fail needs --assert: the assertions whose breach stops the run, e.g. --assert 'p99<20ms,errors<1%'"},
		{"--abort-after negative", true, -time.Second, "abort-after", false, live, 0, "--abort-after must not be negative, got -1s"},
		{"none judged while running", true, 0, "", false, atEnd, 0,
			"--abort-on-fail: none of the assertions (cpu<50%) can be judged while the load runs: " + JudgedAtEnd + " are judged at the end only"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			given := func(name string) bool { return name == tc.given }
			got, err := ParseAbort(tc.on, tc.after, given, tc.findMax, tc.asserts)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("ParseAbort() = %v, %v; want error %q", got, err, tc.err)
				}
				return
			}
			if err != nil || len(got) != tc.live {
				t.Fatalf("ParseAbort() = %v, %v; want %d live", got, err, tc.live)
			}
		})
	}
}
