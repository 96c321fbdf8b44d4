package merge

import (
	"encoding/json"
	"fmt"

	"loadgen/results/hist"
	"loadgen/results/store"
)

// Decode reads one run to merge from a result file's bytes: a loadgen run
// (loadgen run --json) or a sweep's step file, whose run is taken, of a
// schema this build reads, with every encoded histogram decodable (those
// by name and by host too).
func Decode(source string, b []byte) (Input, error) {
	run, err := store.DecodeRun(b) // checks the file's schema and tool, a run's or a step's
	if err != nil {
		return Input{}, fmt.Errorf("%s: %w", source, err)
	}
	var head struct {
		Kind   string          `json:"kind"`
		Rung   *string         `json:"rung"`
		Run    json.RawMessage `json:"run"`
		Failed string          `json:"failed"`
	}
	_ = json.Unmarshal(b, &head) // DecodeRun parsed it
	switch {
	case head.Kind != "":
		return Input{}, fmt.Errorf("%s is a %s's manifest, not a run: merge run files (loadgen run --json) or a sweep's steps/*.json", source, head.Kind)
	case head.Rung != nil || len(head.Run) > 0 || head.Failed != "":
		if len(head.Run) == 0 || string(head.Run) == "null" {
			return Input{}, store.NoRun(source, head.Failed)
		}
		if run, err = store.DecodeRun(head.Run); err != nil {
			return Input{}, fmt.Errorf("%s: run: %w", source, err)
		}
	}
	if store.Empty(run) {
		return Input{}, fmt.Errorf("%s: not a loadgen run (no config, summary or histogram): merge run files (loadgen run --json) or a sweep's steps/*.json", source)
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
	for _, t := range []table{byName, byHost} {
		for _, r := range t.rows(run) {
			if r.Histogram == "" {
				continue // an older run: its latency by name is left out
			}
			if _, err := hist.Decode(r.Histogram); err != nil {
				return Input{}, fmt.Errorf("%s: requests_by_%s %q: histogram: %w", source, t.what, r.Name, err)
			}
		}
	}
	return Input{Source: source, Run: run}, nil
}
