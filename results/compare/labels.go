package compare

import (
	"slices"
	"strings"

	"loadgen/results"
)

// labelMatch is how the runs of A and B carry labels (--label): the
// labels each side's runs all share, and the keys that also tell apart
// runs within a side, by which steps are matched besides path, rung,
// payload and rate (a key must be on both sides).
type labelMatch struct {
	a, b results.Labels // each side's common labels
	keys []string       // matched on, sorted
}

func matchLabels(a, b []*results.Run) labelMatch {
	ca, otherA := results.CommonLabels(labelsOf(a))
	cb, otherB := results.CommonLabels(labelsOf(b))
	m := labelMatch{a: ca, b: cb}
	inA, inB := keysOf(a), keysOf(b)
	for _, k := range append(otherA, otherB...) {
		if inA[k] && inB[k] && !slices.Contains(m.keys, k) {
			m.keys = append(m.keys, k)
		}
	}
	slices.Sort(m.keys)
	return m
}

func labelsOf(runs []*results.Run) []results.Labels {
	out := make([]results.Labels, len(runs))
	for i, r := range runs {
		out[i] = r.Labels
	}
	return out
}

func keysOf(runs []*results.Run) map[string]bool {
	out := map[string]bool{}
	for _, r := range runs {
		for k := range r.Labels {
			out[k] = true
		}
	}
	return out
}

// of is a step's matched labels, "k=v k2=v2" ("" with no key): part of
// its cell's key and label.
func (m labelMatch) of(st *results.Step) string {
	if len(m.keys) == 0 || st.Run == nil {
		return ""
	}
	parts := make([]string, 0, len(m.keys))
	for _, k := range m.keys {
		if v, ok := st.Run.Labels[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, " ")
}

// by says what steps are matched by: path, rung, payload, rate and the
// labels both sides share.
func (m labelMatch) by() string {
	if len(m.keys) > 0 {
		return "path, rung, payload, rate and label " + strings.Join(m.keys, ", ")
	}
	return "path, rung, payload and rate"
}

// lines say what was matched and which labels each side carried, for
// the comparison's header; none when neither side carries labels.
func (m labelMatch) lines(steps bool) []string {
	if len(m.a) == 0 && len(m.b) == 0 && len(m.keys) == 0 {
		return nil
	}
	var out []string
	side := func(l results.Labels) string {
		if len(l) == 0 {
			return "none"
		}
		return strings.ReplaceAll(l.String(), ",", ", ")
	}
	out = append(out, "labels: A "+side(m.a)+"; B "+side(m.b))
	if steps {
		out = append(out, "steps matched by "+m.by())
	}
	if d := diffLabels(m.a, m.b); d != "" {
		out = append(out, "compared: "+d)
	}
	return out
}

// diffLabels says what differs between the sides' common labels: "build
// 1 → 2, mesh istio → linkerd"; "" when nothing does.
func diffLabels(a, b results.Labels) string {
	keys := a.Keys()
	for _, k := range b.Keys() {
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var d []string
	for _, k := range keys {
		x, okA := a[k]
		y, okB := b[k]
		if okA && okB && x == y {
			continue
		}
		if !okA {
			x = "(none)"
		}
		if !okB {
			y = "(none)"
		}
		d = append(d, k+" "+x+" → "+y)
	}
	return strings.Join(d, ", ")
}
