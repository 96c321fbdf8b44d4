package report

import (
	"fmt"
	"strings"

	"loadgen/results"
)

// flags are the marks a report puts on figures that are doubtful
// (Cell.Flags), in order, with the words every report explains them in:
// the tables' legend, the HTML report's legend and titles, and loadgen
// run's summary of a run on a saturated machine (Wrk).
var flags = []struct {
	letter, name, meaning string
}{
	{"F", "failed", "a repeat has no result, or no request of it succeeded"},
	{"I", "interrupted", "stopped early"},
	{"G", "generator saturated", fmt.Sprintf("loadgen used ≥%.0f%% of its CPUs", 100*results.SaturatedAbove)},
	{"M", "machine saturated", fmt.Sprintf("the machine's CPUs were ≥%.0f%% busy (every process, from /proc/stat); figures measure contention", 100*results.SaturatedAbove)},
}

// FlagMeaning says what a flag (F, I, G, M) means: "machine saturated:
// the machine's CPUs were ≥90% busy …"; "" for another letter.
func FlagMeaning(letter string) string {
	for _, f := range flags {
		if f.letter == letter {
			return f.name + ": " + f.meaning
		}
	}
	return ""
}

// FlagName is a flag's short name: "machine saturated" for M; "" for
// another letter.
func FlagName(letter string) string {
	for _, f := range flags {
		if f.letter == letter {
			return f.name
		}
	}
	return ""
}

// flagLegend is the tables' short legend of the flags: "F failed, I
// interrupted, G generator saturated, M machine saturated (figures measure
// contention)".
func flagLegend() string {
	var parts []string
	for _, f := range flags {
		parts = append(parts, f.letter+" "+f.name)
	}
	return strings.Join(parts, ", ") + " (figures measure contention)"
}

// machineSaturated is loadgen run's warning for a run on a saturated
// machine: the M flag's words and how busy the machine was.
func machineSaturated(m *results.MachineCost) string {
	return fmt.Sprintf("%s (%.2f of %d CPUs busy, %.0f%%)", FlagMeaning("M"), m.BusyCores, m.CPUs, 100*m.Utilization)
}
