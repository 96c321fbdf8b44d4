package results

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The result format writes every time as a JSON number whose key ends in
// its unit, so that jq and scripts compare them as they are
// (.summary.latency.p99_us < 5000):
//
//   - _us, microseconds, for what one request takes or may take: the
//     latencies and connect times, the request timeout, the pacing lag;
//   - _s, seconds, for stretches of the run: its duration and warm-up, the
//     measured window, last_ok, the outage and when it began, CPU time, a
//     cost source's window.
//
// Both are exact to the nanosecond ("p50_us": 92.159, "duration_s":
// 3.000424856). The Go fields stay Durations: the structs below that hold
// them write and read their times through micros and seconds, under the
// keys of their JSON tags. docs/schema/*.schema.json document the format.

// micros is a Duration written as a number of microseconds.
type micros Duration

// seconds is a Duration written as a number of seconds.
type seconds Duration

func (d micros) MarshalJSON() ([]byte, error)  { return decimal(int64(d), 3), nil }
func (d seconds) MarshalJSON() ([]byte, error) { return decimal(int64(d), 9), nil }

func (d *micros) UnmarshalJSON(b []byte) error {
	ns, err := parseDecimal(b, 3)
	if err != nil {
		return fmt.Errorf("want a number of microseconds: %w", err)
	}
	if ns != nil {
		*d = micros(*ns)
	}
	return nil
}

func (d *seconds) UnmarshalJSON(b []byte) error {
	ns, err := parseDecimal(b, 9)
	if err != nil {
		return fmt.Errorf("want a number of seconds: %w", err)
	}
	if ns != nil {
		*d = seconds(*ns)
	}
	return nil
}

// FormatMicros and FormatSeconds write a duration as the result format
// does: a decimal number of microseconds or seconds, exact to the
// nanosecond, without trailing zeros.
func FormatMicros(d Duration) string  { return string(decimal(int64(d), 3)) }
func FormatSeconds(d Duration) string { return string(decimal(int64(d), 9)) }

var pow10 = [...]uint64{1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, 1000000000}

// decimal writes ns / 10^digits exactly, without trailing zeros.
func decimal(ns int64, digits int) []byte {
	var b []byte
	u := uint64(ns)
	if ns < 0 {
		b = append(b, '-')
		u = -u // two's complement: right for math.MinInt64 too
	}
	whole, frac := u/pow10[digits], u%pow10[digits]
	b = strconv.AppendUint(b, whole, 10)
	if frac != 0 {
		f := strconv.FormatUint(frac+pow10[digits], 10)[1:] // zero-padded to digits
		b = append(append(b, '.'), strings.TrimRight(f, "0")...)
	}
	return b
}

// parseDecimal reads a JSON number as an integer count of 10^-digits
// (nanoseconds, for microseconds or seconds), rounded half away from zero;
// nil for null. Plain decimals are read exactly, exponents through a
// float64.
func parseDecimal(b []byte, digits int) (*int64, error) {
	s := string(b)
	if s == "null" {
		return nil, nil
	}
	if s == "" || !(s[0] == '-' || s[0] >= '0' && s[0] <= '9') {
		return nil, fmt.Errorf("got %.40s", s)
	}
	if strings.ContainsAny(s, "eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, err
		}
		v := math.Round(f * float64(pow10[digits]))
		if math.IsNaN(v) || v >= math.MaxInt64 || v < math.MinInt64 {
			return nil, fmt.Errorf("%s is out of range", s)
		}
		n := int64(v)
		return &n, nil
	}
	neg := s[0] == '-'
	if neg {
		s = s[1:]
	}
	whole, frac, _ := strings.Cut(s, ".")
	round := false
	if len(frac) > digits {
		round = frac[digits] >= '5'
		frac = frac[:digits]
	}
	frac += strings.Repeat("0", digits-len(frac))
	w, err := strconv.ParseUint(whole, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b, err)
	}
	f, err := strconv.ParseUint(frac, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", b, err)
	}
	if round {
		f++
	}
	if w > (math.MaxInt64-f)/pow10[digits] {
		return nil, fmt.Errorf("%s is out of range", b)
	}
	n := int64(w*pow10[digits] + f)
	if neg {
		n = -n
	}
	return &n, nil
}

// The structs that hold times write them through an anonymous struct that
// embeds their plain form (its fields, methods dropped) and shadows each
// time with its unit's type under the same key: the embedded one, deeper,
// is hidden. A time a struct gains without a shadow here would be written
// as a Go string, which the schema test (docs/schema) refuses.

func (l Latency) MarshalJSON() ([]byte, error) {
	type plain Latency
	return json.Marshal(struct {
		plain
		Min    micros `json:"min_us"`
		Mean   micros `json:"mean_us"`
		StdDev micros `json:"stdev_us"`
		Max    micros `json:"max_us"`
		P50    micros `json:"p50_us"`
		P75    micros `json:"p75_us"`
		P90    micros `json:"p90_us"`
		P95    micros `json:"p95_us"`
		P99    micros `json:"p99_us"`
		P999   micros `json:"p99_9_us"`
		P9999  micros `json:"p99_99_us"`
	}{plain(l), micros(l.Min), micros(l.Mean), micros(l.StdDev), micros(l.Max),
		micros(l.P50), micros(l.P75), micros(l.P90), micros(l.P95), micros(l.P99), micros(l.P999), micros(l.P9999)})
}

func (l *Latency) UnmarshalJSON(b []byte) error {
	type plain Latency
	v := struct {
		*plain
		Min    *micros `json:"min_us"`
		Mean   *micros `json:"mean_us"`
		StdDev *micros `json:"stdev_us"`
		Max    *micros `json:"max_us"`
		P50    *micros `json:"p50_us"`
		P75    *micros `json:"p75_us"`
		P90    *micros `json:"p90_us"`
		P95    *micros `json:"p95_us"`
		P99    *micros `json:"p99_us"`
		P999   *micros `json:"p99_9_us"`
		P9999  *micros `json:"p99_99_us"`
	}{plain: (*plain)(l), Min: (*micros)(&l.Min), Mean: (*micros)(&l.Mean), StdDev: (*micros)(&l.StdDev), Max: (*micros)(&l.Max),
		P50: (*micros)(&l.P50), P75: (*micros)(&l.P75), P90: (*micros)(&l.P90), P95: (*micros)(&l.P95), P99: (*micros)(&l.P99),
		P999: (*micros)(&l.P999), P9999: (*micros)(&l.P9999)}
	return json.Unmarshal(b, &v)
}

func (c Config) MarshalJSON() ([]byte, error) {
	type plain Config
	return json.Marshal(struct {
		plain
		Duration seconds `json:"duration_s"`
		Warmup   seconds `json:"warmup_s,omitempty"`
		Timeout  micros  `json:"timeout_us"`
	}{plain(c), seconds(c.Duration), seconds(c.Warmup), micros(c.Timeout)})
}

func (c *Config) UnmarshalJSON(b []byte) error {
	type plain Config
	v := struct {
		*plain
		Duration *seconds `json:"duration_s"`
		Warmup   *seconds `json:"warmup_s"`
		Timeout  *micros  `json:"timeout_us"`
	}{(*plain)(c), (*seconds)(&c.Duration), (*seconds)(&c.Warmup), (*micros)(&c.Timeout)}
	return json.Unmarshal(b, &v)
}

func (s Summary) MarshalJSON() ([]byte, error) {
	type plain Summary
	return json.Marshal(struct {
		plain
		Duration seconds `json:"duration_s"`
		LastOK   seconds `json:"last_ok_s,omitempty"`
		Outage   seconds `json:"outage_s,omitempty"`
		OutageAt seconds `json:"outage_at_s,omitempty"`
	}{plain(s), seconds(s.Duration), seconds(s.LastOK), seconds(s.Outage), seconds(s.OutageAt)})
}

func (s *Summary) UnmarshalJSON(b []byte) error {
	type plain Summary
	v := struct {
		*plain
		Duration *seconds `json:"duration_s"`
		LastOK   *seconds `json:"last_ok_s"`
		Outage   *seconds `json:"outage_s"`
		OutageAt *seconds `json:"outage_at_s"`
	}{(*plain)(s), (*seconds)(&s.Duration), (*seconds)(&s.LastOK), (*seconds)(&s.Outage), (*seconds)(&s.OutageAt)}
	return json.Unmarshal(b, &v)
}

func (p Pacing) MarshalJSON() ([]byte, error) {
	type plain Pacing
	return json.Marshal(struct {
		plain
		MaxLag micros `json:"max_lag_us"`
		Slack  micros `json:"slack_us,omitempty"`
	}{plain(p), micros(p.MaxLag), micros(p.Slack)})
}

func (p *Pacing) UnmarshalJSON(b []byte) error {
	type plain Pacing
	v := struct {
		*plain
		MaxLag *micros `json:"max_lag_us"`
		Slack  *micros `json:"slack_us"`
	}{(*plain)(p), (*micros)(&p.MaxLag), (*micros)(&p.Slack)}
	return json.Unmarshal(b, &v)
}

func (d Datagrams) MarshalJSON() ([]byte, error) {
	type plain Datagrams
	return json.Marshal(struct {
		plain
		Span seconds `json:"span_s"`
	}{plain(d), seconds(d.Span)})
}

func (d *Datagrams) UnmarshalJSON(b []byte) error {
	type plain Datagrams
	v := struct {
		*plain
		Span *seconds `json:"span_s"`
	}{(*plain)(d), (*seconds)(&d.Span)}
	return json.Unmarshal(b, &v)
}
