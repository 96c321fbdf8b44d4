package report

import (
	"fmt"
	"io"
)

// Percentiles writes the full latency percentile spectrum of every run in
// HdrHistogram's .hgrm layout (values in milliseconds), as wrk2 prints it
// and HdrHistogram's plotter reads it. A single run prints the spectrum
// alone; a sweep prints one per step, each after a "#" comment line
// naming it (split the output there for the plotter).
func Percentiles(w io.Writer, sweeps []*Sweep) error {
	one := len(sweeps) == 1 && sweeps[0].Single()
	for _, s := range sweeps {
		for _, st := range s.Steps {
			if st.Run == nil {
				continue
			}
			h, err := decodeHist(st.Run.Histograms.Latency)
			if err != nil {
				return fmt.Errorf("step %s: %w", st.ID, err)
			}
			if !one {
				if _, err := fmt.Fprintf(w, "# %s: %s (%s)\n", s.Name, stepLabel(s, st), st.ID); err != nil {
					return err
				}
			}
			if err := h.WritePercentiles(w); err != nil {
				return err
			}
			if !one {
				if _, err := fmt.Fprintln(w); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
