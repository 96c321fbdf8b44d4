// Package hist is the only importer of hdrhistogram-go. It records latencies
// in nanoseconds from 1 µs to 60 s with 3 significant digits, merges exactly,
// and encodes to HdrHistogram's own compressed base64 form, so logs and
// result files open in HdrHistogram's tools.
//
// A Histogram is not safe for concurrent use: the engine gives each shard its
// own and merges them.
package hist

import (
	"fmt"
	"math"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// The fixed geometry of every histogram loadgen records, in nanoseconds.
const (
	Lowest  = int64(time.Microsecond)
	Highest = int64(60 * time.Second)
	SigFigs = 3
)

// Histogram is a latency histogram of fixed size, whatever the count.
type Histogram struct {
	h        *hdr.Histogram
	overflow int64 // values above Highest, recorded as Highest
}

// New returns an empty histogram with the fixed geometry.
func New() *Histogram { return &Histogram{h: hdr.New(Lowest, Highest, SigFigs)} }

// Record adds one value. Values below 1 µs are recorded as 1 µs, values above
// 60 s as 60 s (and counted in Overflow): a latency is never dropped.
func (h *Histogram) Record(d time.Duration) {
	v := int64(d)
	if v < Lowest {
		v = Lowest
	} else if v > Highest {
		v = Highest
		h.overflow++
	}
	_ = h.h.RecordValue(v) // cannot fail: v is within range
}

// RecordN adds n occurrences of one value.
func (h *Histogram) RecordN(d time.Duration, n int64) {
	v := int64(d)
	if v < Lowest {
		v = Lowest
	} else if v > Highest {
		v = Highest
		h.overflow += n
	}
	_ = h.h.RecordValues(v, n)
}

// Merge adds every value of o into h. Both have the same geometry, so the
// merge is exact.
func (h *Histogram) Merge(o *Histogram) {
	h.h.Merge(o.h)
	h.overflow += o.overflow
}

// Reset empties h, keeping its memory.
func (h *Histogram) Reset() { h.h.Reset(); h.overflow = 0 }

// Clone returns an independent copy.
func (h *Histogram) Clone() *Histogram { return &Histogram{h: h.h.Clone(), overflow: h.overflow} }

// Count is the number of recorded values.
func (h *Histogram) Count() int64 { return h.h.TotalCount() }

// Overflow is the number of values that exceeded 60 s.
func (h *Histogram) Overflow() int64 { return h.overflow }

// Min, Max, Mean and StdDev of the recorded values; zero when empty.
func (h *Histogram) Min() time.Duration {
	if h.Count() == 0 {
		return 0
	}
	return time.Duration(max(Lowest, h.h.Min()))
}

func (h *Histogram) Max() time.Duration {
	if h.Count() == 0 {
		return 0
	}
	return time.Duration(h.h.Max())
}

func (h *Histogram) Mean() time.Duration { return time.Duration(math.Round(h.h.Mean())) }

func (h *Histogram) StdDev() time.Duration { return time.Duration(math.Round(h.h.StdDev())) }

// Quantile returns the value at quantile q in [0, 1] (0.99 is p99).
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.Count() == 0 {
		return 0
	}
	q = math.Max(0, math.Min(1, q))
	return time.Duration(max(Lowest, h.h.ValueAtQuantile(q*100)))
}

// WithinStdDev is the share (0..100 %) of values within mean ± one standard
// deviation: wrk's "+/- Stdev" column.
func (h *Histogram) WithinStdDev() float64 {
	n := h.Count()
	if n == 0 {
		return 0
	}
	mean, sd := h.h.Mean(), h.h.StdDev()
	lo, hi := mean-sd, mean+sd
	var in int64
	for _, b := range h.h.Distribution() {
		if b.Count == 0 {
			continue
		}
		mid := float64(b.From+b.To) / 2
		if mid >= lo && mid <= hi {
			in += b.Count
		}
	}
	return 100 * float64(in) / float64(n)
}

// Bucket is one non-empty range of recorded values.
type Bucket struct {
	From, To time.Duration // inclusive range of equivalent values
	Count    int64
}

// Buckets returns the non-empty buckets in ascending order.
func (h *Histogram) Buckets() []Bucket {
	var out []Bucket
	for _, b := range h.h.Distribution() {
		if b.Count != 0 {
			out = append(out, Bucket{From: time.Duration(b.From), To: time.Duration(b.To), Count: b.Count})
		}
	}
	return out
}

// Encode returns HdrHistogram's V2 compressed encoding, base64 ("HISTF...").
func (h *Histogram) Encode() (string, error) {
	b, err := h.h.Encode(hdr.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// Decode parses the output of Encode (or of any HdrHistogram implementation).
// A histogram of another geometry is re-recorded into the fixed one; values
// outside 1 µs … 60 s are clamped.
func Decode(s string) (*Histogram, error) {
	d, err := hdr.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return adopt(d), nil
}

// adopt wraps a decoded histogram, re-recording it into the fixed geometry
// when it was written with another.
func adopt(d *hdr.Histogram) *Histogram {
	if d.LowestTrackableValue() == Lowest && d.HighestTrackableValue() == Highest && d.SignificantFigures() == SigFigs {
		return &Histogram{h: d}
	}
	h := New()
	for _, b := range d.Distribution() {
		if b.Count > 0 {
			h.RecordN(time.Duration(b.To), b.Count)
		}
	}
	return h
}
