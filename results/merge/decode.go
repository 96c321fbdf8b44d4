package merge

import (
	"fmt"

	"loadgen/results/hist"
	"loadgen/results/store"
)

// Decode reads one run to merge from a result file's bytes: a loadgen run
// of a schema this build reads, with every encoded histogram decodable.
func Decode(source string, b []byte) (Input, error) {
	run, err := store.DecodeRun(b)
	if err != nil {
		return Input{}, fmt.Errorf("%s: %w", source, err)
	}
	if run.Histograms.Latency == "" && run.Summary.Requests > 0 {
		return Input{}, fmt.Errorf("%s: the run has no encoded latency histogram: it cannot be merged exactly", source)
	}
	h := &histograms{}
	for _, f := range h.fields(&run.Histograms) {
		if *f.enc == "" {
			continue
		}
		if _, err := hist.Decode(*f.enc); err != nil {
			return Input{}, fmt.Errorf("%s: histograms.%s: %w", source, f.name, err)
		}
	}
	return Input{Source: source, Run: run}, nil
}
