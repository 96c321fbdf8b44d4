// Package compare judges results: assertions for CI ("p99<20ms"), their
// JUnit report, and A-versus-B comparisons of runs and sweeps that tell a
// real change from noise.
package compare

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Assertion is one bound on a run's figure: METRIC OP VALUE[UNIT], as
// "p99<20ms", "errors<0.1%", "cpu.nginx<=1.5" or "mem.envoy<200MiB".
//
// Metrics:
//
//	rps                                   requests/s (no unit)
//	p50 p75 p90 p95 p99 p999 p9999        latency, corrected in open loop (needs a time unit);
//	pNN.N, max, mean                      any percentile above 0 and below 100 (p99.5, p99.99:
//	                                      read from the run's histogram when the summary lacks it)
//	errors, timeouts                      failed (all classes) or timed-out requests:
//	                                      a count, or with % a share of the requests sent
//	cpu                                   the generator's CPU: cores, or with % its share of the CPUs it may use
//	cpu.NAME                              a watched process set of a sweep step: mean cores
//	mem.NAME                              a watched process set: peak bytes (B KiB MiB GiB)
type Assertion struct {
	Metric string  // canonical: lower case base name, cpu.NAME / mem.NAME keep NAME as written
	Op     string  // < <= > >=
	Value  float64 // as written, in Unit
	Unit   string  // "", "%", ns us ms s, B KiB MiB GiB
}

// metric kinds, by what their value is and which units they take.
type kind int

const (
	kindRate    kind = iota // rps
	kindLatency             // needs a time unit
	kindCount               // errors, timeouts: count or %
	kindCPU                 // generator: cores or %
	kindProcCPU             // cpu.NAME: cores
	kindProcMem             // mem.NAME: bytes
)

var metrics = map[string]kind{
	"rps": kindRate,
	"p50": kindLatency, "p75": kindLatency, "p90": kindLatency, "p95": kindLatency, "p99": kindLatency,
	"p999": kindLatency, "p9999": kindLatency, "max": kindLatency, "mean": kindLatency,
	"errors": kindCount, "timeouts": kindCount,
	"cpu": kindCPU,
}

// aliases are other spellings of a metric, as the JSON summary and other
// tools name them.
var aliases = map[string]string{"p99.9": "p999", "p99_9": "p999", "p99.99": "p9999", "p99_99": "p9999"}

const metricList = "rps, p50, p90, p95, p99, p99.9 (any pNN.N), max, mean, errors, timeouts, cpu, cpu.NAME or mem.NAME"

// unit scales: how many base units (ns, bytes) one of the unit is.
var timeUnits = map[string]float64{"ns": 1, "us": 1e3, "µs": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9}
var byteUnits = map[string]float64{"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}

// siRate are the multipliers a rate may carry, as -R takes them.
var siRate = map[string]float64{"k": 1e3, "K": 1e3, "M": 1e6}

// Parse reads an assertion such as "p99<20ms" or "errors < 0.1 %". Its
// error is one line naming the expression and what is wrong with it.
func Parse(expr string) (Assertion, error) {
	a, err := parse(expr)
	if err != nil {
		return Assertion{}, fmt.Errorf("assertion %q: %s", expr, err)
	}
	return a, nil
}

func parse(expr string) (Assertion, error) {
	var a Assertion
	s := strings.TrimSpace(expr)
	if s == "" {
		return a, fmt.Errorf("empty: want METRIC OP VALUE, e.g. p99<20ms")
	}
	i := strings.IndexAny(s, "<>=!")
	if i < 0 {
		return a, fmt.Errorf("no comparison: want METRIC OP VALUE with OP one of < <= > >=, e.g. p99<20ms")
	}
	j := i
	for j < len(s) && strings.IndexByte("<>=!", s[j]) >= 0 {
		j++
	}
	a.Op = s[i:j]
	switch a.Op {
	case "<", "<=", ">", ">=":
	default:
		return a, fmt.Errorf("operator %q: use one of < <= > >=", a.Op)
	}
	name := strings.TrimSpace(s[:i])
	if name == "" {
		return a, fmt.Errorf("no metric before %s: want one of %s", a.Op, metricList)
	}
	k, err := a.setMetric(name)
	if err != nil {
		return a, err
	}
	value := strings.TrimSpace(s[j:])
	if value == "" {
		return a, fmt.Errorf("no value after %s", a.Op)
	}
	num, unit := splitValue(value)
	if strings.HasPrefix(num, "-") {
		return a, fmt.Errorf("value %q is negative", value)
	}
	v, err := parseNumber(num)
	if err != nil {
		return a, fmt.Errorf("value %q is not a number", value)
	}
	a.Value = v
	if err := a.setUnit(k, unit, num); err != nil {
		return a, err
	}
	return a, nil
}

// setMetric checks and sets the metric name.
func (a *Assertion) setMetric(name string) (kind, error) {
	for _, r := range name {
		if unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return 0, fmt.Errorf("unknown metric %q: want one of %s", name, metricList)
		}
	}
	if !utf8.ValidString(name) {
		return 0, fmt.Errorf("unknown metric %q: want one of %s", name, metricList)
	}
	if len(name) > 4 {
		prefix, proc := strings.ToLower(name[:4]), name[4:]
		switch prefix {
		case "cpu.":
			a.Metric = "cpu." + proc
			return kindProcCPU, nil
		case "mem.":
			a.Metric = "mem." + proc
			return kindProcMem, nil
		}
	}
	lower := strings.ToLower(name)
	if alias, ok := aliases[lower]; ok {
		lower = alias
	}
	k, ok := metrics[lower]
	if !ok {
		if p, isP, err := percentileMetric(lower); isP {
			if err != nil {
				return 0, fmt.Errorf("unknown metric %q: %v", name, err)
			}
			a.Metric = p
			return kindLatency, nil
		}
		return 0, fmt.Errorf("unknown metric %q: want one of %s", name, metricList)
	}
	a.Metric = lower
	return k, nil
}

// percentileMetric reads a percentile other than the summary's named ones,
// "p99.5" or "p75.25": isP when name is p and a number, err when the
// number is not above 0 and below 100. Its canonical name keeps the number
// as written, less trailing zeros: p99.50 is p99.5.
func percentileMetric(name string) (canonical string, isP bool, err error) {
	num, ok := strings.CutPrefix(name, "p")
	if !ok || num == "" || strings.Trim(num, "0123456789.") != "" {
		return "", false, nil
	}
	v, perr := strconv.ParseFloat(num, 64)
	switch {
	case perr != nil:
		return "", true, fmt.Errorf("%q is not a number", num)
	case v <= 0 || v >= 100:
		return "", true, fmt.Errorf("a percentile is above 0 and below 100, e.g. p99.5 (p999 and p9999 name p99.9 and p99.99)")
	}
	return "p" + strconv.FormatFloat(v, 'f', -1, 64), true, nil
}

// percentOf is the percentile a latency metric names, in percent (p999 is
// 99.9); ok is false for max and mean.
func percentOf(metric string) (float64, bool) {
	switch metric {
	case "p999":
		return 99.9, true
	case "p9999":
		return 99.99, true
	case "max", "mean":
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.TrimPrefix(metric, "p"), 64)
	return v, err == nil
}

// setUnit checks that the unit suits the metric and sets its canonical form.
func (a *Assertion) setUnit(k kind, unit, num string) error {
	switch k {
	case kindLatency:
		if unit == "" {
			return fmt.Errorf("%s is a latency: add a time unit to %s (ns, us, ms or s), e.g. %s%s%sms", a.Metric, num, a.Metric, a.Op, num)
		}
		if _, ok := timeUnits[unit]; !ok {
			return fmt.Errorf("unit %q: %s is a latency, use ns, us, ms or s", unit, a.Metric)
		}
		if unit == "µs" || unit == "μs" {
			unit = "us"
		}
	case kindRate, kindProcCPU:
		if m, ok := siRate[unit]; ok && k == kindRate { // rps>20k, as rates are written
			a.Value *= m
			unit = ""
		}
		if unit != "" {
			what := "requests/s"
			if k == kindProcCPU {
				what = "CPU cores"
			}
			return fmt.Errorf("unit %q: %s takes a plain number of %s", unit, a.Metric, what)
		}
	case kindCount, kindCPU:
		if unit != "" && unit != "%" {
			what := "a count"
			if k == kindCPU {
				what = "CPU cores"
			}
			return fmt.Errorf("unit %q: %s takes %s or a percentage (%%)", unit, a.Metric, what)
		}
		if unit == "%" && k == kindCount && a.Value > 100 {
			return fmt.Errorf("%s%%: a share of the requests is at most 100%%", num)
		}
	case kindProcMem:
		if unit == "" {
			unit = "B"
		}
		if _, ok := byteUnits[unit]; !ok {
			return fmt.Errorf("unit %q: %s is memory, use B, KiB, MiB or GiB", unit, a.Metric)
		}
	}
	a.Unit = unit
	return nil
}

// splitValue splits "20ms" into "20" and "ms", "0.1 %" into "0.1" and "%".
func splitValue(s string) (num, unit string) {
	i := 0
	for i < len(s) && strings.IndexByte("0123456789.eE+-", s[i]) >= 0 {
		i++
	}
	return s[:i], strings.TrimSpace(s[i:])
}

// parseNumber reads a plain non-negative decimal: 20, 0.5, 1e3.
func parseNumber(s string) (float64, error) {
	if s == "" || (s[0] != '.' && (s[0] < '0' || s[0] > '9')) {
		return 0, fmt.Errorf("not a number")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, err
	}
	return v, nil
}

// String is the assertion in its canonical form, which Parse reads back.
func (a Assertion) String() string {
	return a.Metric + a.Op + a.bound()
}

// bound is the value and unit as written: "20ms", "0.1%".
func (a Assertion) bound() string {
	return plain(a.Value) + a.Unit
}

// plain formats v in full, without an exponent unless it is huge or tiny.
func plain(v float64) string {
	if v == 0 || (v >= 1e-6 && v < 1e21) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func (a Assertion) kind() kind {
	switch {
	case strings.HasPrefix(a.Metric, "cpu."):
		return kindProcCPU
	case strings.HasPrefix(a.Metric, "mem."):
		return kindProcMem
	}
	if k, ok := metrics[a.Metric]; ok {
		return k
	}
	if _, isP, _ := percentileMetric(a.Metric); isP {
		return kindLatency
	}
	return kindRate
}

// holds tells whether measured (in the assertion's unit) is within bounds.
func (a Assertion) holds(measured float64) bool {
	switch a.Op {
	case "<":
		return measured < a.Value
	case "<=":
		return measured <= a.Value
	case ">":
		return measured > a.Value
	case ">=":
		return measured >= a.Value
	}
	return false
}

// ParseAll parses each expression, stopping at the first bad one. An
// expression may hold several split by commas ('p99<20ms,errors<1%'), as
// --assert and --slo take them.
func ParseAll(exprs []string) ([]Assertion, error) {
	out := make([]Assertion, 0, len(exprs))
	for _, list := range exprs {
		for _, e := range strings.Split(list, ",") {
			a, err := Parse(e)
			if err != nil {
				return nil, err
			}
			out = append(out, a)
		}
	}
	return out, nil
}
