package sweep

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"loadgen/results"
	"loadgen/results/report"
)

// FailedSearches is the error of the searches that had no run at all
// (Max.Failed: the path cannot be reached), naming them, or nil: the
// notes under their brackets (Bracket) say why.
func FailedSearches(maxes []Max) error {
	var failed []string
	for _, m := range maxes {
		if m.Failed != "" {
			failed = append(failed, m.Label())
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return fmt.Errorf("find-max: no run on %s (see the notes above)", strings.Join(failed, ", "))
}

// Bracket is each search's bracket: the highest rate that held the
// SLO — reported only once confirmed, two of at most three probes held —
// and the lowest that missed it, each with the probes its verdict rests
// on ("2/3"); the G and M flags of the search's probes. The notes say why
// the lowest failing rate failed, the machine's state during the search,
// and which probes measured contention. interrupted: the search was
// stopped (a search with no failing rate did not reach its ceiling);
// schema: of the findmax.json (before 3, a rate was reported on one probe
// that held).
func Bracket(maxes []Max, interrupted bool, schema int) report.FindMax {
	var fm report.FindMax
	for _, m := range maxes {
		what := m.Label()
		rate, p99, held := "none", "—", "—"
		if v := m.Pass; v != nil {
			held = fmt.Sprintf("%d/%d", v.Passed, v.Probes)
			switch {
			case m.Rate > 0:
				rate = fmt.Sprintf("%.0f", m.Rate)
				if m.P99 > 0 {
					p99 = report.Latency(results.Duration(m.P99)) // as the other tables print it
				}
				if schema < 3 && !v.Confirmed() { // before schema 3, one probe that held was enough
					fm.Notes = append(fm.Notes, fmt.Sprintf("%s: %.0f/s held in %d of %d probes: an older loadgen reported it; this one reports a rate only when 2 of at most 3 probes held",
						what, v.Rate, v.Passed, v.Probes))
				}
			case interrupted:
				fm.Notes = append(fm.Notes, fmt.Sprintf("%s: %.0f/s held in %d of %d probes and was not confirmed (2 must hold) before the search was interrupted; --resume continues it",
					what, v.Rate, v.Passed, v.Probes))
			default:
				fm.Notes = append(fm.Notes, fmt.Sprintf("%s: %.0f/s held in %d of %d probes and was not confirmed (2 must hold): the search ran out of steps",
					what, v.Rate, v.Passed, v.Probes))
			}
		}
		fail, missed := "—", "—"
		switch v := m.Fail; {
		case m.Failed != "":
			if m.Pass == nil {
				rate = "failed"
			}
			fm.Notes = append(fm.Notes, fmt.Sprintf("%s: failed: %s", what, oneLine(m.Failed)))
		case v != nil:
			fail, missed = fmt.Sprintf("%.0f", v.Rate), fmt.Sprintf("%d/%d", v.Probes-v.Passed, v.Probes)
			again := ""
			if v.Judged > 1 {
				again = fmt.Sprintf(" (judged %d times; the last verdict's probes are counted)", v.Judged)
			}
			fm.Notes = append(fm.Notes, fmt.Sprintf("%s at %.0f/s: %s%s", what, v.Rate, v.Why, again))
		case m.Pass != nil && interrupted:
			fm.Notes = append(fm.Notes, fmt.Sprintf("%s: interrupted with %.0f/s held and no rate missed yet; --resume continues the search", what, m.Pass.Rate))
		case m.Pass != nil:
			fm.Notes = append(fm.Notes, what+": held up to the search's ceiling; the maximum is higher")
		default:
			fm.Notes = append(fm.Notes, what+": interrupted before any verdict")
		}
		fm.Notes = append(fm.Notes, machineNotes(what, m)...)
		fm.Rows = append(fm.Rows, report.FindMaxRow{Payload: FormatSize(m.Payload), Step: m.Rung, Path: m.Path, Max: rate, P99: p99,
			Held: held, LowestFailing: fail, Missed: missed, Probes: fmt.Sprint(len(m.Probes)), Flags: searchFlags(m)})
	}
	return fm
}

// searchFlags are the G and M flags of any of the search's probes.
func searchFlags(m Max) string {
	var g, mm bool
	for _, c := range m.Contended {
		g = g || strings.Contains(c.Flags, "G")
		mm = mm || strings.Contains(c.Flags, "M")
	}
	if ms := m.Machine; ms != nil {
		g, mm = g || ms.GeneratorSaturated > 0, mm || ms.MachineSaturated > 0
	}
	f := ""
	if g {
		f += "G"
	}
	if mm {
		f += "M"
	}
	return f
}

// maxContendedListed bounds the probes a contention note names.
const maxContendedListed = 8

// machineNotes say how busy the machine was during a search and, when
// the generator or the machine was saturated during any of its probes,
// that the search measures contention, and during which probes.
func machineNotes(what string, m Max) []string {
	ms := m.Machine
	if ms == nil {
		return nil
	}
	var notes []string
	if ms.Measured > 0 {
		cpus := ""
		if ms.CPUs > 0 {
			cpus = fmt.Sprintf("%d CPUs, ", ms.CPUs)
		}
		notes = append(notes, fmt.Sprintf("%s: the machine during the search: %s%s busy (median %.0f%%) over %d probes (every process, /proc/stat)",
			what, cpus, pctRange(ms.UtilizationMin, ms.UtilizationMax), 100*ms.UtilizationMedian, ms.Measured))
	}
	if !m.MeasuresContention {
		return notes
	}
	var during string
	switch n := len(m.Probes); {
	case ms.MachineSaturated > 0 && ms.GeneratorSaturated > 0:
		during = fmt.Sprintf("the machine's CPUs (M) were saturated during %d of the %d probes, loadgen's own (G) during %d", ms.MachineSaturated, n, ms.GeneratorSaturated)
	case ms.MachineSaturated > 0:
		during = fmt.Sprintf("the machine's CPUs (M) were saturated during %d of the %d probes", ms.MachineSaturated, n)
	default:
		during = fmt.Sprintf("loadgen's own CPUs (G) were saturated during %d of the %d probes", ms.GeneratorSaturated, n)
	}
	which := "(an older findmax.json does not say which)"
	if len(m.Contended) > 0 {
		var ps []string
		for i, c := range m.Contended {
			if i == maxContendedListed {
				ps = append(ps, fmt.Sprintf("and %d more (%s: contended_probes)", len(m.Contended)-i, FindMaxFileName))
				break
			}
			at := ""
			switch {
			case m.Rate > 0 && c.Rate == m.Rate:
				at = ", at the max"
			case m.Fail != nil && c.Rate == m.Fail.Rate:
				at = ", at the lowest failing rate"
			}
			ps = append(ps, fmt.Sprintf("%.0f/s #%d (%s%s)", c.Rate, c.Attempt, c.Flags, at))
		}
		which = strings.Join(ps, ", ")
	}
	notes = append(notes, fmt.Sprintf("%s: MEASURES CONTENTION, not the path alone: %s: %s; "+
		"their verdicts may measure contention for CPU, other processes' included", what, during, which))
	return notes
}

// pctRange is "35–98%", or "97%" when both ends agree.
func pctRange(lo, hi float64) string {
	a, b := fmt.Sprintf("%.0f", 100*lo), fmt.Sprintf("%.0f", 100*hi)
	if a == b {
		return a + "%"
	}
	return a + "–" + b + "%"
}

// oneLine is a reason on one line; "no reason given" when there is none.
func oneLine(s string) string {
	if s == "" {
		return "no reason given"
	}
	return strings.ReplaceAll(s, "\n", " ")
}

// ReadBrackets reads, for each results directory of a find-max search
// (its findmax.json), the bracket the search found, as the sweep printed
// it (Bracket), its Dir the directory: the report shows it before the
// per-rate tables of its probes. Directories without a manifest or a
// findmax.json are passed over.
func ReadBrackets(sweeps []*report.Sweep) ([]report.FindMax, error) {
	var out []report.FindMax
	for _, s := range sweeps {
		if s.Manifest == nil {
			continue
		}
		f, err := ReadFindMax(filepath.Join(s.Name, FindMaxFileName))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		fm := Bracket(f.Searches, f.Interrupted, f.Schema)
		fm.Dir = s.Name
		out = append(out, fm)
	}
	return out, nil
}
