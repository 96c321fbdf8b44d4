package report

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"loadgen/results"
	"loadgen/results/hist"
)

// fortioResult is the JSON fortio writes for a run (its periodic
// RunnerResults with the HTTP, gRPC or TCP runner's fields), so fortio's
// report UI and the tools built on its files (Meshery, Istio's perf
// scripts) read loadgen results. Times are in seconds, as fortio records
// them; ActualDuration is in nanoseconds, as Go encodes a time.Duration.
type fortioResult struct {
	RunType           string
	Labels            string
	StartTime         time.Time
	RequestedQPS      string
	RequestedDuration string
	ActualQPS         float64
	ActualDuration    int64
	NumThreads        int
	Version           string
	DurationHistogram *fortioHist
	Exactly           int64
	Jitter            bool
	Uniform           bool
	NoCatchUp         bool
	RunID             int64
	AccessLoggerInfo  string
	ID                string
	RetCodes          map[string]int64

	// HTTP runner.
	URL             string      `json:",omitempty"`
	NumConnections  int         `json:",omitempty"`
	Sizes           *fortioHist `json:",omitempty"`
	SocketCount     int64
	ConnectionStats *fortioHist `json:",omitempty"`
	AbortOn         int

	// gRPC and TCP runners.
	Destination   string `json:",omitempty"`
	Streams       int    `json:",omitempty"`
	BytesSent     int64  `json:",omitempty"`
	BytesReceived int64  `json:",omitempty"`
}

// fortioHist is fortio's stats.HistogramData: a sorted list of buckets
// covering [Min, Max], cumulative percent per bucket, and percentiles.
type fortioHist struct {
	Count       int64
	Min         float64
	Max         float64
	Sum         float64
	Avg         float64
	StdDev      float64
	Data        []fortioBucket
	Percentiles []fortioPercentile `json:",omitempty"`
}

type fortioBucket struct {
	Start   float64
	End     float64
	Percent float64 // cumulative
	Count   int64
}

type fortioPercentile struct {
	Percentile float64
	Value      float64
}

// fortioPercentiles are fortio's defaults plus p99.9.
var fortioPercentiles = []float64{50, 75, 90, 99, 99.9}

// Fortio writes every run as fortio's result JSON, its histogram built
// from the run's own HdrHistogram (coalesced by Coarse into fortio's own
// bucket layout: HdrHistogram keeps thousands of buckets). One run
// is written as one object, as fortio writes it; several as an array.
func Fortio(w io.Writer, sweeps []*Sweep) error {
	var out []*fortioResult
	for _, s := range sweeps {
		for _, st := range s.Steps {
			if st.Run == nil {
				continue
			}
			r, err := fortioRun(s, st)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
	}
	return writeJSON(w, out)
}

// writeJSON writes one element alone and several as an array.
func writeJSON[T any](w io.Writer, xs []T) error {
	var v any = xs
	if len(xs) == 1 {
		v = xs[0]
	} else if xs == nil {
		v = []T{}
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func fortioRun(s *Sweep, st *results.Step) (*fortioResult, error) {
	run := st.Run
	c := run.Config
	sum := run.Summary
	lat, err := decodeHist(run.Histograms.Latency)
	if err != nil {
		return nil, fmt.Errorf("step %s: %w", st.ID, err)
	}
	r := &fortioResult{
		Labels:            fortioLabels(s, st),
		StartTime:         run.Start,
		RequestedQPS:      "max",
		RequestedDuration: c.Duration.D().String(),
		ActualQPS:         sum.RPS,
		ActualDuration:    int64(sum.Duration),
		NumThreads:        c.Connections * max(1, c.Streams),
		Version:           "loadgen " + run.Env.Version,
		DurationHistogram: fortioHistogram(lat),
		Exactly:           c.Requests,
		ID:                st.ID,
		RetCodes:          map[string]int64{},
		SocketCount:       sum.Connections.Established,
	}
	if c.OpenLoop() {
		r.RequestedQPS = strconv.FormatFloat(c.Rate, 'f', -1, 64)
	}
	if c.Requests > 0 {
		r.RequestedDuration = fmt.Sprintf("exactly %d calls", c.Requests)
	}
	failed := sum.Errors.Total() - sum.Errors.Status // requests without a status
	switch p := c.Protocol; {
	case strings.HasPrefix(p, "grpc"):
		r.RunType = "GRPC Ping"
		r.Destination, r.Streams = c.Target, c.Streams
		for code, n := range sum.Status {
			name := "SERVING" // fortio's word for a call that succeeded
			if code != 0 {
				name = strconv.Itoa(code)
				if code < len(grpcCodes) {
					name = grpcCodes[code]
				}
			}
			r.RetCodes[name] += n
		}
		if failed > 0 {
			r.RetCodes["Error"] += failed
		}
	case strings.HasPrefix(p, "tcp"):
		r.RunType = "TCP"
		r.Destination = c.Target
		r.BytesSent, r.BytesReceived = sum.BytesWritten, sum.BytesRead
		if ok := sum.Requests - sum.Errors.Total() + sum.Errors.Connect; ok > 0 {
			r.RetCodes["OK"] = ok
		}
		e := sum.Errors
		for name, n := range map[string]int64{"connect": e.Connect, "read": e.Read, "write": e.Write, "timeout": e.Timeout, "protocol": e.Protocol} {
			if n > 0 {
				r.RetCodes[name] = n
			}
		}
	default:
		r.RunType = "HTTP"
		r.URL, r.NumConnections = c.Target, c.Connections
		for code, n := range sum.Status {
			r.RetCodes[strconv.Itoa(code)] += n
		}
		if failed > 0 {
			r.RetCodes["-1"] += failed // fortio's code for a request that got no response
		}
		if sum.Requests > 0 {
			avg := float64(sum.BytesRead) / float64(sum.Requests)
			r.Sizes = &fortioHist{Count: sum.Requests, Sum: float64(sum.BytesRead), Avg: avg}
		}
		if run.Histograms.Connect != "" {
			ch, err := decodeHist(run.Histograms.Connect)
			if err != nil {
				return nil, fmt.Errorf("step %s: connect %w", st.ID, err)
			}
			r.ConnectionStats = fortioHistogram(ch)
		}
	}
	return r, nil
}

// fortioLabels is fortio's Labels, one string, as its -labels flag fills
// it: the user's own text, here the run's --label pairs (k=v,k=v, keys
// sorted), and in a sweep the step after fortio's " , " (the separator of
// its default, URL , host); without labels, the step alone.
func fortioLabels(s *Sweep, st *results.Step) string {
	user := st.Run.Labels.String()
	switch {
	case user == "":
		return stepLabel(s, st)
	case s.Single():
		return user
	}
	return user + " , " + stepLabel(s, st)
}

// stepLabel names a step for tools that show one label per result.
func stepLabel(s *Sweep, st *results.Step) string {
	if s.Single() {
		return st.Path
	}
	l := fmt.Sprintf("%s %s %s", st.Path, st.Rung, sizeLabel(st.Payload))
	if st.Rate > 0 {
		l += " " + num(st.Rate) + "qps"
	}
	if st.Repeat > 1 {
		l += fmt.Sprintf(" r%d", st.Repeat)
	}
	return l
}

func decodeHist(enc string) (*hist.Histogram, error) {
	if enc == "" {
		return hist.New(), nil
	}
	return hist.Decode(enc)
}

func fortioHistogram(h *hist.Histogram) *fortioHist {
	sec := func(d time.Duration) float64 { return d.Seconds() }
	n := h.Count()
	f := &fortioHist{Count: n, Data: []fortioBucket{}}
	if n == 0 {
		return f
	}
	f.Min, f.Max = sec(h.Min()), sec(h.Max())
	f.Avg, f.StdDev = sec(h.Mean()), sec(h.StdDev())
	f.Sum = f.Avg * float64(n)
	var total int64
	bs := Coarse(h.Buckets())
	for i, b := range bs {
		total += b.Count
		fb := fortioBucket{Start: sec(b.From), End: sec(b.To), Count: b.Count, Percent: 100 * float64(total) / float64(n)}
		if i == 0 {
			fb.Start = f.Min
		} else {
			fb.Start = f.Data[i-1].End // fortio's intervals are contiguous: [previous end, end]
		}
		if i == len(bs)-1 {
			fb.End = f.Max
		}
		f.Data = append(f.Data, fb)
	}
	for _, p := range fortioPercentiles {
		f.Percentiles = append(f.Percentiles, fortioPercentile{Percentile: p, Value: sec(h.Quantile(p / 100))})
	}
	return f
}

// coarseEdges are the bucket edges within a decade, as fortio lays its
// own out: 1, 1.2 … 2, 2.5 … 5, 6 … 9 (× 10ⁿ).
var coarseEdges = []float64{10, 12, 14, 16, 18, 20, 25, 30, 35, 40, 45, 50, 60, 70, 80, 90}

// Coarse merges adjacent histogram buckets into 16 per decade (edges at 1,
// 1.2, 1.4 … 2, 2.5 … 5, 6 … 9 × 10ⁿ, as fortio's own histogram has them),
// so a distribution prints in tens of buckets instead of HdrHistogram's
// thousands. Counts are kept exactly; a merged bucket spans its parts.
func Coarse(bs []hist.Bucket) []hist.Bucket {
	var out []hist.Bucket
	key := func(d time.Duration) int {
		v := float64(max(d, 1))
		e := math.Floor(math.Log10(v)) - 1
		m := v / math.Pow(10, e) // 10 ≤ m < 100
		band := 0
		for i, edge := range coarseEdges {
			if m >= edge-1e-9 {
				band = i
			}
		}
		return int(e)*100 + band
	}
	last := -1 << 31
	for _, b := range bs {
		if k := key(b.From); len(out) > 0 && k == last {
			o := &out[len(out)-1]
			o.To = b.To
			o.Count += b.Count
			continue
		} else {
			last = k
		}
		out = append(out, b)
	}
	return out
}
