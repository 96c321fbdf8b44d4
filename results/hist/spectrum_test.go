package hist

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The spectrum of a known histogram, worked out by hand from HdrHistogram's
// rules, not from the code's output. The geometry: 512 ns units (the power
// of two below 1 µs), 2048 sub-buckets, so values under 2^20 ns fall in
// 512 ns steps and bucket b above doubles the step (2^(9+b) ns).
//
//   - 100 µs ×4: 100000/512 = 195.3 → [99840, 100351] → 0.100 ms
//   - 200 µs ×3: 390.6 → [199680, 200191] → 0.200
//   - 300 µs ×2: 585.9 → [299520, 300031] → 0.300
//   - 40 ms ×1: in [2^25, 2^26), bucket 6, steps of 32768 ns:
//     40e6/32768 = 1220.7 → [39976960, 40009727] → 40.010
//
// Percentile steps, 5 ticks per half distance: 10% apart below 50%, 5% to
// 75%, 2.5% to 87.5%, then 1.25%; a row is printed for every step reached
// by the cumulative count (4/10 = 40%, 7/10, 9/10, 10/10), the next step
// above 90% (91.25%) lands on the last value, and a last row at 100%.
// Mean and standard deviation use each bucket's middle (lowest + step/2):
// 100096, 199936, 299776, 39993344 ns: mean 41593088/10 = 4159308.8 ns,
// deviation √(Σ n·(v−mean)²/10) = 11944910 ns. Buckets: 2048·512·2^16 ≥
// 60 s first, so 17.
const knownSpectrum = `       Value   Percentile   TotalCount 1/(1-Percentile)

       0.100     0.000000            4         1.00
       0.100     0.100000            4         1.11
       0.100     0.200000            4         1.25
       0.100     0.300000            4         1.43
       0.100     0.400000            4         1.67
       0.200     0.500000            7         2.00
       0.200     0.550000            7         2.22
       0.200     0.600000            7         2.50
       0.200     0.650000            7         2.86
       0.200     0.700000            7         3.33
       0.300     0.750000            9         4.00
       0.300     0.775000            9         4.44
       0.300     0.800000            9         5.00
       0.300     0.825000            9         5.71
       0.300     0.850000            9         6.67
       0.300     0.875000            9         8.00
       0.300     0.887500            9         8.89
       0.300     0.900000            9        10.00
      40.010     0.912500           10        11.43
      40.010     1.000000           10          inf
#[Mean    =        4.159, StdDeviation   =       11.945]
#[Max     =       40.010, Total count    =           10]
#[Buckets =           17, SubBuckets     =         2048]
`

func knownHistogram() *Histogram {
	h := New()
	h.RecordN(100*time.Microsecond, 4)
	h.RecordN(200*time.Microsecond, 3)
	h.RecordN(300*time.Microsecond, 2)
	h.Record(40 * time.Millisecond)
	return h
}

func TestWritePercentilesKnown(t *testing.T) {
	var b bytes.Buffer
	if err := knownHistogram().WritePercentiles(&b); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != knownSpectrum {
		t.Errorf("spectrum:\n%s\nwant:\n%s", got, knownSpectrum)
	}
}

// wrk2's short list reads the same ranks: ⌊p/100 × 10 + ½⌋.
func TestPercentileKnown(t *testing.T) {
	h := knownHistogram()
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{
		{50, 200191},       // rank 5 → the 200 µs bucket's highest
		{75, 300031},       // rank 8
		{90, 300031},       // rank 9
		{99, 40009727},     // rank 10
		{100, 40009727},    // the max bucket's highest
		{0.001, 100351},    // rank 1 at least
		{99.999, 40009727}, // rank 10
	} {
		if got := h.Percentile(c.p); got != c.want {
			t.Errorf("p%v = %d, want %d", c.p, got, c.want)
		}
	}
	if New().Percentile(50) != 0 {
		t.Error("an empty histogram's p50 is not 0")
	}
}

// The formats wrk2's users parse: HdrHistogram's plotter reads these rows,
// and the #[…] trailer lines.
var (
	spectrumRow   = regexp.MustCompile(`^\s*([0-9.]+)\s+([0-9.]+)\s+([0-9]+)\s+([0-9.]+|inf)$`)
	spectrumMean  = regexp.MustCompile(`^#\[Mean\s+=\s+([0-9.]+), StdDeviation\s+=\s+([0-9.]+)\]$`)
	spectrumMax   = regexp.MustCompile(`^#\[Max\s+=\s+([0-9.]+), Total count\s+=\s+([0-9]+)\]$`)
	spectrumBuckt = regexp.MustCompile(`^#\[Buckets\s+=\s+([0-9]+), SubBuckets\s+=\s+([0-9]+)\]$`)
)

// Any histogram's spectrum parses with those expressions, its columns
// ascend, its last row is 100% of every value, and the trailer agrees.
func FuzzWritePercentiles(f *testing.F) {
	f.Add([]byte{1, 2, 3, 200, 255, 0, 17})
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{9}, 300))
	f.Fuzz(func(t *testing.T, data []byte) {
		h := New()
		for i := 0; i+1 < len(data); i += 2 {
			// Log-spread values from 1 µs to past 60 s.
			v := time.Duration(float64(time.Microsecond) * pow2(float64(data[i])/255*26))
			h.RecordN(v, int64(data[i+1]%7)+1)
		}
		var b bytes.Buffer
		if err := h.WritePercentiles(&b); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if len(lines) < 6 || lines[0] != "       Value   Percentile   TotalCount 1/(1-Percentile)" || lines[1] != "" {
			t.Fatalf("header:\n%s", b.String())
		}
		rows, trailer := lines[2:len(lines)-3], lines[len(lines)-3:]
		var lastV, lastQ float64
		var lastN int64
		for i, l := range rows {
			m := spectrumRow.FindStringSubmatch(l)
			if m == nil {
				t.Fatalf("row %q does not parse", l)
			}
			v, q := num(t, m[1]), num(t, m[2])
			n, _ := strconv.ParseInt(m[3], 10, 64)
			if v < lastV || q < lastQ || n < lastN || (i > 0 && q == lastQ && q < 1) {
				t.Fatalf("row %q after %v %v %v: not ascending", l, lastV, lastQ, lastN)
			}
			if (m[4] == "inf") != (i == len(rows)-1) {
				t.Fatalf("row %q: inf on the last row only", l)
			}
			lastV, lastQ, lastN = v, q, n
		}
		if lastQ != 1 || lastN != h.Count() {
			t.Fatalf("last row at %v with %d values, want 1 and %d", lastQ, lastN, h.Count())
		}
		mean, max, buckets := spectrumMean.FindStringSubmatch(trailer[0]), spectrumMax.FindStringSubmatch(trailer[1]), spectrumBuckt.FindStringSubmatch(trailer[2])
		if mean == nil || max == nil || buckets == nil {
			t.Fatalf("trailer does not parse:\n%s", strings.Join(trailer, "\n"))
		}
		if num(t, max[1]) != lastV || max[2] != strconv.FormatInt(h.Count(), 10) {
			t.Errorf("trailer %q, last row %v with %d", trailer[1], lastV, lastN)
		}
		// The mean counts each bucket at its middle, the rows at its top:
		// it may be half a bucket (0.05%) under the first row, and each
		// figure is rounded to 0.001 ms.
		if first := num(t, rows[0][:12]); h.Count() > 0 && (num(t, mean[1]) < first*0.9995-0.001 || num(t, mean[1]) > lastV) {
			t.Errorf("mean %s outside %v … %v", mean[1], first, lastV)
		}
	})
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func pow2(x float64) float64 {
	r := 1.0
	for ; x >= 1; x-- {
		r *= 2
	}
	return r * (1 + x)
}
