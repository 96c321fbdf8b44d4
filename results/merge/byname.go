package merge

import (
	"fmt"
	"time"

	"loadgen/results"
	"loadgen/results/hist"
)

// A request mix's figures by name and by host (loadgen run --targets) are
// merged as the run's own: counts added, rates summed (each run's over its
// own window), latency from the merged histograms. The runs must have sent
// one mix: the same names with the same weights, and the same hosts.

// table is one of a run's tables by name: by name or by host.
type table struct {
	what string // "name", "host": for messages
	rows func(*results.Run) []results.NamedRequests
}

var (
	byName = table{"name", func(r *results.Run) []results.NamedRequests { return r.RequestsByName }}
	byHost = table{"host", func(r *results.Run) []results.NamedRequests { return r.RequestsByHost }}
)

// sameMix refuses runs of different request mixes: a name (or host) that
// one run has and another has not, or of another weight. Config.Targets
// is the file as given, so two files of one path differ here.
func sameMix(in []Input) error {
	first := in[0]
	for _, t := range []table{byName, byHost} {
		want := t.rows(first.Run)
		for _, x := range in[1:] {
			if d := mixDiff(t, first.Source, want, x.Source, t.rows(x.Run)); d != "" {
				return fmt.Errorf("%s and %s are runs of different request mixes (%s): merge only the workers of one run",
					first.Source, x.Source, d)
			}
		}
	}
	return nil
}

// mixDiff names the first name of a (from source sa) or b (sb) that the
// other has not, or has with another weight; empty when they agree.
func mixDiff(t table, sa string, a []results.NamedRequests, sb string, b []results.NamedRequests) string {
	weights := func(rows []results.NamedRequests) map[string]int {
		m := make(map[string]int, len(rows))
		for _, r := range rows {
			m[r.Name] = r.Weight
		}
		return m
	}
	wa, wb := weights(a), weights(b)
	switch {
	case len(a) > 0 && len(b) == 0:
		return fmt.Sprintf("%s has no figures by %s", sb, t.what)
	case len(b) > 0 && len(a) == 0:
		return fmt.Sprintf("%s has no figures by %s", sa, t.what)
	}
	for _, r := range a {
		w, ok := wb[r.Name]
		switch {
		case !ok:
			return fmt.Sprintf("%s %q in %s only", t.what, r.Name, sa)
		case w != r.Weight:
			return fmt.Sprintf("%s %q of weight %d vs %d", t.what, r.Name, r.Weight, w)
		}
	}
	for _, r := range b {
		if _, ok := wa[r.Name]; !ok {
			return fmt.Sprintf("%s %q in %s only", t.what, r.Name, sb)
		}
	}
	return ""
}

// named merges the inputs' table t (sameMix checked that they agree), in
// the order the names first appear across the inputs. Every row's
// latency is rebuilt from the merged histograms when every input kept
// them; otherwise the table's latencies are left out (zero), as they
// cannot be merged exactly, and the note says so.
func named(t table, in []Input) (rows []results.NamedRequests, note string, err error) {
	index := map[string]int{}
	var hists []*hist.Histogram
	var counts []int64 // the requests sent of each name, for its share
	exact := true
	var without string
	for _, x := range in {
		w := ownWindow(x.Run)
		for _, r := range t.rows(x.Run) {
			k, ok := index[r.Name]
			if !ok {
				k = len(rows)
				index[r.Name] = k
				rows = append(rows, results.NamedRequests{Name: r.Name, Weight: r.Weight})
				hists = append(hists, hist.New())
				counts = append(counts, 0)
			}
			addNamed(&rows[k], &r, w)
			counts[k] += r.Latency.Count
			if r.Histogram == "" {
				if exact {
					without = x.Source
				}
				exact = false
				continue
			}
			h, err := hist.Decode(r.Histogram)
			if err != nil {
				return nil, "", fmt.Errorf("%s: requests_by_%s %q: histogram: %w", x.Source, t.what, r.Name, err)
			}
			hists[k].Merge(h)
		}
	}
	var total int64
	weight := 0
	for k := range rows {
		total += counts[k]
		weight += rows[k].Weight
	}
	for k := range rows {
		nr := &rows[k]
		if weight > 0 {
			nr.WeightShare = float64(nr.Weight) / float64(weight)
		}
		if total > 0 {
			nr.Share = float64(counts[k]) / float64(total)
		}
		if !exact {
			continue
		}
		nr.Latency = results.Reduce(hists[k])
		if nr.Histogram, err = hists[k].Encode(); err != nil {
			return nil, "", err
		}
	}
	if !exact && len(rows) > 0 {
		note = fmt.Sprintf("latency by %s left out: %s has no histograms by %s (a loadgen that did not keep them): it cannot be merged exactly; counts, errors and rates by %s are merged",
			t.what, without, t.what, t.what)
	}
	return rows, note, nil
}

// addNamed adds b's counts into a, and b's rate over its run's own
// window w (the rate b says when its run records no window), as the
// run's RPS adds up.
func addNamed(a, b *results.NamedRequests, w time.Duration) {
	a.Requests += b.Requests
	if w > 0 {
		a.RPS += float64(b.Requests) / w.Seconds()
	} else {
		a.RPS += b.RPS
	}
	a.Connections += b.Connections
	a.Status = addStatus(a.Status, b.Status)
	addErrors(&a.Errors, b.Errors)
}
