package sweep

import (
	"strings"
	"testing"
	"time"

	"loadgen/results"
)

func TestParseSLO(t *testing.T) {
	ms := func(v float64) results.Duration { return results.Duration(v * float64(time.Millisecond)) }
	run := func(p99 float64, errs int64) *results.Run {
		return &results.Run{Summary: results.Summary{
			Requests: 1000, Duration: results.Duration(time.Second), RPS: 1000,
			Latency: results.Latency{Count: 1000, P50: ms(p99 / 2), P99: ms(p99), Max: ms(p99)},
			Errors:  results.Errors{Status: errs},
		}}
	}
	for _, tc := range []struct {
		name, expr string
		run        *results.Run
		ok         bool
		why, err   string
	}{
		{"all hold", "p99<10ms,errors<1%", run(5, 0), true, "", ""},
		{"first fails", "p99<10ms,errors<1%", run(12, 0), false, "p99", ""},
		{"second fails", "p99<10ms,errors<1%", run(5, 50), false, "errors", ""},
		{"one assertion", "p99<10ms", run(5, 50), true, "", ""},
		{"bad expression", "p99<<10ms", nil, false, "", "--slo: "},
		{"process refused", "p99<10ms,cpu.nginx<1", nil, false, "", "--slo cpu.nginx<1: a probe judges the load's own figures"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slo, text, err := ParseSLO(tc.expr)
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
					t.Fatalf("err = %v, want prefix %q", err, tc.err)
				}
				if slo != nil {
					t.Error("a refused SLO returned a judge")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if text != tc.expr {
				t.Errorf("text = %q, want %q", text, tc.expr)
			}
			ok, why := slo(tc.run)
			if ok != tc.ok || !strings.Contains(why, tc.why) || (ok && why != "") {
				t.Errorf("judge = %v %q, want %v with %q", ok, why, tc.ok, tc.why)
			}
		})
	}
}

// TestParseFindMax: --find-max and --slo go together, and the objective
// is parsed only with --find-max.
func TestParseFindMax(t *testing.T) {
	for _, tc := range []struct {
		name    string
		findMax bool
		slo     string
		judge   bool
		text    string
		errWant string
	}{
		{"neither", false, "", false, "", ""},
		{"both", true, "p99<10ms", true, "p99<10ms", ""},
		{"find-max alone", true, "", false, "", "--find-max needs --slo, e.g. --slo 'p99<10ms,errors<0.1%'"},
		{"slo alone", false, "p99<10ms", false, "", "--slo goes with --find-max (for checks on every step, use --assert)"},
		{"bad slo", true, "p99<<10ms", false, "", "--slo: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			judge, text, err := ParseFindMax(tc.findMax, tc.slo)
			if tc.errWant != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.errWant) {
					t.Fatalf("err = %v, want %q", err, tc.errWant)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (judge != nil) != tc.judge || text != tc.text {
				t.Errorf("judge %v, text %q; want judge %v, text %q", judge != nil, text, tc.judge, tc.text)
			}
		})
	}
}
