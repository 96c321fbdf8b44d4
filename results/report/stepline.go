package report

import (
	"fmt"

	"loadgen/results"
)

// StepFigures is a finished step's figures on one line, as a sweep's
// progress prints them: "15079 req/s, p50 224us, p99 983us, errors 0". A
// stream's rate is in Gbit/s with no latency (a write's latency is not a
// round trip's); a run of datagrams says its loss; a run with no answer
// says so; a step with no run says why it failed.
func StepFigures(st *results.Step) string {
	if st.Run == nil {
		return "failed: " + st.Failed
	}
	s := st.Run.Summary
	unit, stream := RateUnit(st.Run.Config.Protocol) // the tables' unit
	rate, lat := fmt.Sprintf("%.0f %s", s.RPS, unit), fmt.Sprintf(", p50 %v, p99 %v", Latency(s.Latency.P50), Latency(s.Latency.P99))
	if stream {
		rate, lat = fmt.Sprintf("%.2f %s", s.Gbps(), unit), ""
	}
	if g := s.Datagrams; g != nil {
		lat += fmt.Sprintf(", lost %d (%.2f%%)", g.Lost, g.LossPercent())
	}
	figures := fmt.Sprintf("%s%s, errors %d", rate, lat, s.Errors.Total())
	if s.Requests == 0 {
		figures = fmt.Sprintf("no response, errors %d", s.Errors.Total())
	}
	if st.Run.Interrupted {
		figures = "interrupted: " + figures
	}
	return figures
}
