package results

import "encoding/json"

// Stage is one stage of a staged open-loop schedule (-R
// '0-2k/30s,2k/2m,2k-0/10s'), measured apart: the reporting intervals
// (Timeline) whose middle falls in it, so its bounds are the intervals'.
type Stage struct {
	Stage    string   `json:"stage"`      // as asked: 0-2000/30s, 2000/2m
	Start    Duration `json:"start_s"`    // its first interval's start, from the measured window's
	Duration Duration `json:"duration_s"` // its intervals' length: its measured part
	Asked    float64  `json:"asked_rps"`  // the schedule's mean over its intervals
	// Achieved is the requests that ended in its intervals (answered or
	// failed) per second.
	Achieved float64 `json:"achieved_rps"`
	Requests int64   `json:"requests"` // answered (any status), as Summary.Requests
	Errors   int64   `json:"errors"`   // of every class, as Errors.Total
	// Latency is of every request that ended in its intervals, as
	// Summary.Latency (from the intended start).
	Latency Latency `json:"latency"`
}

func (s Stage) MarshalJSON() ([]byte, error) {
	type plain Stage
	return json.Marshal(struct {
		plain
		Start    seconds `json:"start_s"`
		Duration seconds `json:"duration_s"`
	}{plain(s), seconds(s.Start), seconds(s.Duration)})
}

func (s *Stage) UnmarshalJSON(b []byte) error {
	type plain Stage
	v := struct {
		*plain
		Start    *seconds `json:"start_s"`
		Duration *seconds `json:"duration_s"`
	}{(*plain)(s), (*seconds)(&s.Start), (*seconds)(&s.Duration)}
	return json.Unmarshal(b, &v)
}
