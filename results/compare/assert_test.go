package compare

import (
	"slices"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want Assertion
		str  string
	}{
		{"p99<20ms", Assertion{"p99", "<", 20, "ms"}, "p99<20ms"},
		{" p99 < 20 ms ", Assertion{"p99", "<", 20, "ms"}, "p99<20ms"},
		{"P99<=1.5s", Assertion{"p99", "<=", 1.5, "s"}, "p99<=1.5s"},
		{"p50<250µs", Assertion{"p50", "<", 250, "us"}, "p50<250us"},
		{"p50<250μs", Assertion{"p50", "<", 250, "us"}, "p50<250us"},
		{"p75<900ns", Assertion{"p75", "<", 900, "ns"}, "p75<900ns"},
		{"p999<1e3us", Assertion{"p999", "<", 1000, "us"}, "p999<1000us"},
		{"p99.9<30ms", Assertion{"p999", "<", 30, "ms"}, "p999<30ms"},
		{"p99.99<40ms", Assertion{"p9999", "<", 40, "ms"}, "p9999<40ms"},
		{"p95<200ms", Assertion{"p95", "<", 200, "ms"}, "p95<200ms"},
		{"p99.5<5ms", Assertion{"p99.5", "<", 5, "ms"}, "p99.5<5ms"},
		{"P75.50<1ms", Assertion{"p75.5", "<", 1, "ms"}, "p75.5<1ms"},
		{"max<1s", Assertion{"max", "<", 1, "s"}, "max<1s"},
		{"mean<.5ms", Assertion{"mean", "<", 0.5, "ms"}, "mean<0.5ms"},
		{"rps>1000", Assertion{"rps", ">", 1000, ""}, "rps>1000"},
		{"rps >= 2.5e4", Assertion{"rps", ">=", 25000, ""}, "rps>=25000"},
		{"rps>20k", Assertion{"rps", ">", 20000, ""}, "rps>20000"},
		{"errors<0.1%", Assertion{"errors", "<", 0.1, "%"}, "errors<0.1%"},
		{"errors < 0.1 %", Assertion{"errors", "<", 0.1, "%"}, "errors<0.1%"},
		{"errors<=0", Assertion{"errors", "<=", 0, ""}, "errors<=0"},
		{"timeouts<5", Assertion{"timeouts", "<", 5, ""}, "timeouts<5"},
		{"timeouts<1%", Assertion{"timeouts", "<", 1, "%"}, "timeouts<1%"},
		{"cpu<1.5", Assertion{"cpu", "<", 1.5, ""}, "cpu<1.5"},
		{"cpu<90%", Assertion{"cpu", "<", 90, "%"}, "cpu<90%"},
		{"cpu.nginx<=2", Assertion{"cpu.nginx", "<=", 2, ""}, "cpu.nginx<=2"},
		{"CPU.Envoy<2", Assertion{"cpu.Envoy", "<", 2, ""}, "cpu.Envoy<2"},
		{"mem.envoy<200MiB", Assertion{"mem.envoy", "<", 200, "MiB"}, "mem.envoy<200MiB"},
		{"mem.envoy<1GiB", Assertion{"mem.envoy", "<", 1, "GiB"}, "mem.envoy<1GiB"},
		{"mem.target<1048576", Assertion{"mem.target", "<", 1 << 20, "B"}, "mem.target<1048576B"},
		{"mem.istio-proxy<64 KiB", Assertion{"mem.istio-proxy", "<", 64, "KiB"}, "mem.istio-proxy<64KiB"},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			a, err := Parse(tc.expr)
			if err != nil {
				t.Fatal(err)
			}
			if a != tc.want {
				t.Errorf("got %+v, want %+v", a, tc.want)
			}
			if a.String() != tc.str {
				t.Errorf("String() = %q, want %q", a.String(), tc.str)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		expr string
		msg  string
	}{
		{"", "empty"},
		{"p99", "no comparison"},
		{"p99 20ms", "no comparison"},
		{"p99<<3", `operator "<<"`},
		{"p99=20ms", `operator "="`},
		{"p99==20ms", `operator "=="`},
		{"p99!=20ms", `operator "!="`},
		{"p99=<20ms", `operator "=<"`},
		{"<20ms", "no metric"},
		{"p100<20ms", `unknown metric "p100": a percentile is above 0 and below 100`},
		{"p995<20ms", `p999 and p9999 name p99.9 and p99.99`},
		{"p9.9.9<20ms", `unknown metric "p9.9.9": "9.9.9" is not a number`},
		{"latency<20ms", `unknown metric "latency"`},
		{"p 99<20ms", `unknown metric "p 99"`},
		{"cpu.<1", `unknown metric "cpu."`},
		{"p99<", "no value"},
		{"p99<20", "add a time unit"},
		{"p99<20m", `unit "m"`},
		{"p99<20MS", `unit "MS"`},
		{"p99<20%", `unit "%"`},
		{"p99<-5ms", "negative"},
		{"errors<abc", `value "abc" is not a number`},
		{"errors<1e", "not a number"},
		{"errors<inf", "not a number"},
		{"errors<NaN%", "not a number"},
		{"errors<1e999", "not a number"},
		{"errors<5ms", `unit "ms"`},
		{"rps>1000ms", "plain number"},
		{"rps>1x", `unit "x"`},
		{"errors<150%", "at most 100%"},
		{"cpu<2ms", `unit "ms"`},
		{"cpu.nginx<50%", "plain number"},
		{"mem.nginx<20MB", `unit "MB"`},
		{"p99<2 0ms", "unit"},
	} {
		t.Run(tc.expr, func(t *testing.T) {
			_, err := Parse(tc.expr)
			if err == nil {
				t.Fatalf("no error, want one saying %q", tc.msg)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.msg) || !strings.Contains(msg, "assertion ") || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line naming the expression and saying %q", msg, tc.msg)
			}
		})
	}
}

func TestParseAll(t *testing.T) {
	for _, tc := range []struct {
		exprs []string
		want  []string
	}{
		{[]string{"p99<20ms", "errors<1%"}, []string{"p99<20ms", "errors<1%"}},
		{[]string{"p99<20ms,errors<1%"}, []string{"p99<20ms", "errors<1%"}}, // --slo, one --assert
		{[]string{"p99<20ms,errors<1%", "rps>1000"}, []string{"p99<20ms", "errors<1%", "rps>1000"}},
		{nil, nil},
	} {
		as, err := ParseAll(tc.exprs)
		if err != nil {
			t.Fatalf("ParseAll(%q): %v", tc.exprs, err)
		}
		var got []string
		for _, a := range as {
			got = append(got, a.String())
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("ParseAll(%q) = %q, want %q", tc.exprs, got, tc.want)
		}
	}
	if _, err := ParseAll([]string{"p99<20ms", "p99<<3"}); err == nil || !strings.Contains(err.Error(), "p99<<3") {
		t.Errorf("error %v, want one naming p99<<3", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"p99<20ms", "errors < 0.1 %", "cpu.nginx<=2", "mem.envoy<200MiB", "p99<<3",
		"rps>=1e3", "timeouts<1%", "p99.9<5µs", "cpu<90%", "", "<", "mem.<1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := Parse(s)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error of %q is not one line: %q", s, err)
			}
			return
		}
		b, err := Parse(a.String())
		if err != nil {
			t.Fatalf("%q parsed as %+v, whose String %q does not parse: %v", s, a, a.String(), err)
		}
		if a != b {
			t.Fatalf("%q parsed as %+v; its String %q parses as %+v", s, a, a.String(), b)
		}
		a.Eval(sampleRun(), nil) // must not panic either
	})
}
