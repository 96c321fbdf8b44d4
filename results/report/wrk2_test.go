package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"loadgen/results"
	"loadgen/results/hist"
)

// spectrumRun is the fixture with histograms of known values: corrected
// 100 µs ×4, 200 µs ×3, 300 µs ×2 and 40 ms ×1; uncorrected 100 µs ×10.
func spectrumRun(t *testing.T) *results.Run {
	t.Helper()
	run := fixture()
	lat, unc := hist.New(), hist.New()
	lat.RecordN(100*time.Microsecond, 4)
	lat.RecordN(200*time.Microsecond, 3)
	lat.RecordN(300*time.Microsecond, 2)
	lat.Record(40 * time.Millisecond)
	unc.RecordN(100*time.Microsecond, 10)
	var err error
	if run.Histograms.Latency, err = lat.Encode(); err != nil {
		t.Fatal(err)
	}
	if run.Histograms.Uncorrected, err = unc.Encode(); err != nil {
		t.Fatal(err)
	}
	return run
}

// wrk2's short lists of those histograms, worked out by hand: the value at
// rank ⌊p/100 × 10 + ½⌋ is its bucket's highest (512 ns steps below
// 1.05 ms: 200 µs → 200191 ns; 32768 ns steps at 40 ms: → 40009727 ns),
// in wrk's units, each line "%7.3f%%" and the value right-aligned in 10.
const (
	recordedList = `  Latency Distribution (HdrHistogram - Recorded Latency)
 50.000%  200.19us
 75.000%  300.03us
 90.000%  300.03us
 99.000%   40.01ms
 99.900%   40.01ms
 99.990%   40.01ms
 99.999%   40.01ms
100.000%   40.01ms

  Detailed Percentile spectrum:
       Value   Percentile   TotalCount 1/(1-Percentile)

       0.100     0.000000            4         1.00
`
	uncorrectedList = `
  Latency Distribution (HdrHistogram - Uncorrected Latency (measured without taking delayed starts into account))
 50.000%  100.35us
 75.000%  100.35us
 90.000%  100.35us
 99.000%  100.35us
 99.900%  100.35us
 99.990%  100.35us
 99.999%  100.35us
100.000%  100.35us

  Detailed Percentile spectrum:
       Value   Percentile   TotalCount 1/(1-Percentile)

       0.100     0.000000           10         1.00
`
	dashes = "----------------------------------------------------------\n"
)

func TestWrk2Spectrum(t *testing.T) {
	for _, c := range []struct {
		name   string
		opt    WrkOptions
		blocks []string // between Req/Sec and "requests in", in order
	}{
		{"none", WrkOptions{}, nil},
		{"-L", WrkOptions{Spectrum: true}, []string{recordedList}},
		{"-U, which implies -L as in wrk2", WrkOptions{Uncorrected: true}, []string{recordedList, uncorrectedList}},
		{"-L -U", WrkOptions{Spectrum: true, Uncorrected: true}, []string{recordedList, uncorrectedList}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WrkBody(&b, spectrumRun(t), c.opt); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			start := strings.Index(out, "    Req/Sec")
			end := strings.Index(out, "  22464 requests in")
			if start < 0 || end < start {
				t.Fatalf("no Req/Sec line before the requests line:\n%s", out)
			}
			middle := out[strings.Index(out[start:], "\n")+start+1 : end]
			for _, block := range c.blocks {
				if !strings.HasPrefix(middle, block) {
					t.Fatalf("want next:\n%s\ngot:\n%s", block, middle)
				}
				// Each block ends with the trailer of its spectrum and
				// wrk2's dashed line.
				i := strings.Index(middle, dashes)
				if i < 0 || !strings.Contains(middle[:i], "#[Buckets =           17, SubBuckets     =         2048]\n") {
					t.Fatalf("block without its trailer and dashes:\n%s", middle)
				}
				middle = middle[i+len(dashes):]
			}
			if middle != "" {
				t.Errorf("more than asked between Req/Sec and the requests line:\n%s", middle)
			}
		})
	}
}

// A closed-loop run has no uncorrected latency: -U adds nothing there.
func TestWrk2NoUncorrected(t *testing.T) {
	run := spectrumRun(t)
	run.Summary.Uncorrected, run.Histograms.Uncorrected = nil, ""
	var b bytes.Buffer
	if err := WrkBody(&b, run, WrkOptions{Uncorrected: true}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Count(out, "Detailed Percentile spectrum:") != 1 || strings.Contains(out, "Uncorrected Latency") {
		t.Errorf("want the recorded spectrum only:\n%s", out)
	}
}
