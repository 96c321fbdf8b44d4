package merge

import (
	"fmt"
	"math"
	"sort"
	"time"

	"loadgen/results"
)

// timelines adds the runs' timelines interval by interval, aligned on the
// clock: an interval of each run starts at its run's Start plus its own
// Start, and the runs' intervals that start within half an interval of
// each other are one interval of the merged run. Counts and rates add.
// The latency percentiles are the largest of the runs' for that interval:
// an upper bound, as a timeline keeps no histogram to merge (the merged
// run's summary stays exact). Runs whose intervals differ in length, or
// that recorded none, give no merged timeline, and the note says why.
func timelines(out *results.Run, in []Input) (tl []results.Interval, note string) {
	var step results.Duration
	for _, x := range in {
		if len(x.Run.Timeline) == 0 {
			return nil, ""
		}
		d := x.Run.Timeline[0].Duration
		if step == 0 {
			step = d
		}
		if d != step || d <= 0 {
			return nil, fmt.Sprintf("no merged timeline: the runs' intervals differ in length (%v, %v)", step.D(), d.D())
		}
	}
	byKey := map[int64]*results.Interval{}
	for _, x := range in {
		off := results.Duration(x.Run.Start.Sub(out.Start))
		for _, iv := range x.Run.Timeline {
			if iv.Duration != step {
				return nil, fmt.Sprintf("no merged timeline: %s has intervals of %v and %v", x.Source, step.D(), iv.Duration.D())
			}
			at := off + iv.Start
			key := int64(math.Round(float64(at) / float64(step)))
			m := byKey[key]
			if m == nil {
				m = &results.Interval{Start: results.Duration(key) * step, Duration: step}
				byKey[key] = m
			}
			m.Warmup = m.Warmup || iv.Warmup
			m.Requests += iv.Requests
			m.Errors += iv.Errors
			m.Timeouts += iv.Timeouts
			m.Status += iv.Status
			m.RPS += iv.RPS
			m.P50 = max(m.P50, iv.P50)
			m.P99 = max(m.P99, iv.P99)
			m.P999 = max(m.P999, iv.P999)
		}
	}
	keys := make([]int64, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool { return keys[a] < keys[b] })
	for _, k := range keys {
		iv := *byKey[k]
		iv.Outage = iv.IsOutage()
		tl = append(tl, iv)
	}
	return tl, fmt.Sprintf("timeline: the runs' intervals added on the clock (%v each); a merged interval's percentiles are the largest worker's, an upper bound", time.Duration(step))
}
