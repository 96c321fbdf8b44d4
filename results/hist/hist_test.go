package hist

import (
	"bytes"
	"math/rand/v2"
	"testing"
	"time"
)

func TestMergeIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	parts := []*Histogram{New(), New(), New(), New()}
	all := New()
	for i := 0; i < 200000; i++ {
		// Log-uniform from 1 µs to 10 s, plus some out-of-range values.
		v := time.Duration(float64(time.Microsecond) * pow10(rng.Float64()*7))
		if i%10000 == 0 {
			v = 90 * time.Second
		}
		parts[i%len(parts)].Record(v)
		all.Record(v)
	}
	merged := New()
	for _, p := range parts {
		merged.Merge(p)
	}
	if merged.Count() != all.Count() || merged.Overflow() != all.Overflow() {
		t.Fatalf("count %d overflow %d, want %d %d", merged.Count(), merged.Overflow(), all.Count(), all.Overflow())
	}
	mb, ab := merged.Buckets(), all.Buckets()
	if len(mb) != len(ab) {
		t.Fatalf("%d buckets, want %d", len(mb), len(ab))
	}
	for i := range mb {
		if mb[i] != ab[i] {
			t.Fatalf("bucket %d: %+v, want %+v", i, mb[i], ab[i])
		}
	}
	for _, q := range []float64{0, 0.5, 0.9, 0.99, 0.999, 0.9999, 1} {
		if m, a := merged.Quantile(q), all.Quantile(q); m != a {
			t.Errorf("q%v: merged %v, single %v", q, m, a)
		}
	}
}

func pow10(x float64) float64 {
	r := 1.0
	for ; x >= 1; x-- {
		r *= 10
	}
	// 10^frac via exp of ln10, good enough for test data
	return r * (1 + x*(9.0/1.0)*0.25)
}

func TestRangeAndPrecision(t *testing.T) {
	h := New()
	h.Record(0)                // clamped to 1 µs
	h.Record(90 * time.Second) // clamped to 60 s
	h.Record(1234567 * time.Nanosecond)
	if h.Count() != 3 || h.Overflow() != 1 {
		t.Fatalf("count %d overflow %d", h.Count(), h.Overflow())
	}
	if got := h.Quantile(0); got < time.Microsecond || got > 1001*time.Nanosecond {
		t.Errorf("min %v, want 1µs", got)
	}
	if got := h.Quantile(1); got < 60*time.Second || got > 60060*time.Millisecond {
		t.Errorf("max %v, want 60s", got)
	}
	// 3 significant digits: 1.234567 ms is within 0.1%.
	mid := h.Quantile(0.5)
	if d := mid - 1234567*time.Nanosecond; d < -1300*time.Nanosecond || d > 1300*time.Nanosecond {
		t.Errorf("p50 %v, want 1.2346ms ± 0.1%%", mid)
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	h := New()
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * 7 * time.Microsecond)
	}
	s, err := h.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if s[:4] != "HIST" {
		t.Errorf("encoding %q… does not look like HdrHistogram's base64", s[:8])
	}
	d, err := Decode(s)
	if err != nil {
		t.Fatal(err)
	}
	if d.Count() != h.Count() || d.Quantile(0.99) != h.Quantile(0.99) || d.Max() != h.Max() {
		t.Errorf("decoded count %d p99 %v max %v, want %d %v %v", d.Count(), d.Quantile(0.99), d.Max(), h.Count(), h.Quantile(0.99), h.Max())
	}
}

func TestLogRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	start := time.Unix(1700000000, 0)
	lw, err := NewLogWriter(&buf, start, "test log")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		h := New()
		for j := 0; j <= i; j++ {
			h.Record(time.Duration(j+1) * time.Millisecond)
		}
		from := start.Add(time.Duration(i) * time.Second)
		if err := lw.Write(h, from, from.Add(time.Second), ""); err != nil {
			t.Fatal(err)
		}
	}
	text := buf.String()
	for _, want := range []string{"#[Histogram log format version 1.3]", "#[StartTime: 1700000000 ", "\"StartTimestamp\",\"Interval_Length\""} {
		if !bytes.Contains(buf.Bytes(), []byte(want)) {
			t.Errorf("log lacks %q:\n%s", want, text)
		}
	}
	hs, tags, err := ReadLog(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(hs) != 3 || len(tags) != 3 {
		t.Fatalf("read %d intervals, want 3", len(hs))
	}
	for i, h := range hs {
		if h.Count() != int64(i+1) {
			t.Errorf("interval %d: %d values, want %d", i, h.Count(), i+1)
		}
	}
}

func FuzzDecode(f *testing.F) {
	h := New()
	h.Record(time.Millisecond)
	s, _ := h.Encode()
	f.Add(s)
	f.Add("HISTFAAAAB")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Decode(s)
		if err != nil {
			return
		}
		// Whatever was decoded: its quantiles lie within min–max, in order,
		// and Encode∘Decode keeps the count, min, max and p99.
		lo, hi := d.Min(), d.Max()
		p50, p99 := d.Quantile(0.5), d.Quantile(0.99)
		if d.Count() > 0 && (p50 < lo || p99 > hi || p50 > p99) {
			t.Fatalf("count %d: p50 %v p99 %v outside min %v – max %v or out of order", d.Count(), p50, p99, lo, hi)
		}
		enc, err := d.Encode()
		if err != nil {
			t.Fatalf("a decoded histogram does not encode: %v", err)
		}
		d2, err := Decode(enc)
		if err != nil {
			t.Fatalf("its own encoding does not decode: %v", err)
		}
		if d2.Count() != d.Count() || d2.Min() != lo || d2.Max() != hi || d2.Quantile(0.99) != p99 {
			t.Fatalf("round trip: count %d→%d min %v→%v max %v→%v p99 %v→%v", d.Count(), d2.Count(), lo, d2.Min(), hi, d2.Max(), p99, d2.Quantile(0.99))
		}
	})
}
