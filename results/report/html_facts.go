package report

import (
	_ "embed"
	"fmt"
	"math"
	"strings"
	"time"
)

func pageFacts(sweeps []*Sweep) []fact {
	var started time.Time
	var n stepCounts
	single := true
	var hosts []string
	for _, s := range sweeps {
		if t := s.Started(); !t.IsZero() && (started.IsZero() || t.Before(started)) {
			started = t
		}
		n.add(s)
		single = single && s.Single()
		if h := hostnames(s.Env().Hostname); h != "" && !contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	var f []fact
	if !started.IsZero() {
		f = append(f, fact{"Started", started.UTC().Format("2006-01-02 15:04 UTC"), ""})
	}
	if single && len(sweeps) == 1 {
		f = append(f, fact{"Run", n.runText(), ""})
	} else {
		f = append(f, fact{"Steps", n.text(), ""})
	}
	if len(sweeps) > 0 {
		e := sweeps[0].Env()
		m := strings.Join(hosts, ", ")
		if e.NumCPU > 0 {
			m += fmt.Sprintf(" · %d CPUs", e.NumCPU)
			if e.CPUModel != "" {
				m += " (" + e.CPUModel + ")"
			}
		}
		if m != "" {
			f = append(f, fact{"Machine", m, ""})
		}
	}
	return f
}

// stepCounts count a report's steps by how they ended, as the sweep that
// ran them did: ok, failed (no run, or no request of it succeeded: Step.
// Failure), aborted (--abort-on-fail), interrupted (Ctrl-C), and those of
// the plan that never ran.
type stepCounts struct{ planned, ok, failed, aborted, interrupted int }

func (n *stepCounts) add(s *Sweep) {
	planned := len(s.Steps)
	if s.Manifest != nil {
		planned = max(planned, len(s.Manifest.Steps))
	}
	n.planned += planned
	for _, st := range s.Steps {
		switch {
		case st.Run != nil && st.Run.Aborted != "":
			n.aborted++
		case st.Run == nil && st.Interrupted, st.Run != nil && st.Run.Interrupted:
			n.interrupted++
		case st.Failure() != "":
			n.failed++
		default:
			n.ok++
		}
	}
}

// text is "1 of 3 ok, 1 aborted, 1 not run".
func (n stepCounts) text() string {
	s := fmt.Sprintf("%d of %d ok", n.ok, n.planned)
	for _, c := range []struct {
		k    int
		what string
	}{{n.failed, "failed"}, {n.aborted, "aborted"}, {n.interrupted, "interrupted"}, {n.planned - n.ok - n.failed - n.aborted - n.interrupted, "not run"}} {
		if c.k > 0 {
			s += fmt.Sprintf(", %d %s", c.k, c.what)
		}
	}
	return s
}

// runText is how a single run ended: "ok", "failed", "aborted",
// "interrupted".
func (n stepCounts) runText() string {
	switch {
	case n.failed > 0:
		return "failed"
	case n.aborted > 0:
		return "aborted"
	case n.interrupted > 0:
		return "interrupted"
	}
	return "ok"
}

// thousands prints a count or rate rounded, with thin thousands separators.
func thousands(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	neg := v < 0
	n := int64(math.Round(math.Abs(v)))
	s := fmt.Sprint(n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString("\u202f")
		}
		b.WriteRune(r)
	}
	if neg {
		return "−" + b.String()
	}
	return b.String()
}

// glanceNote is the caption of the cards of based sweeps with a baseline
// and unbased ones whose paths have none.
func glanceNote(based, unbased int) string {
	const medians = "Medians over the ladder steps and payloads of each path"
	const added = "“added” is the path’s latency minus the baseline’s at the same step"
	const name = "name the direct one baseline (--path baseline=URL, or baseline: true in the sweep file)"
	switch {
	case unbased == 0:
		return medians + "; " + added + "."
	case based == 0:
		return medians + "; no path is the baseline, so no latency or cost is “added”: " + name + "."
	default:
		return medians + "; " + added + "; the sweeps with no path as baseline have none: " + name + "."
	}
}
