package sweep

import (
	"fmt"
	"strconv"
	"time"
)

// Step is one engine run of a sweep.
type Step struct {
	Index   int     `json:"index"`
	Path    string  `json:"path"`
	Rung    Rung    `json:"-"`
	Payload int     `json:"payload"`
	Rate    float64 `json:"rate,omitempty"`
	Repeat  int     `json:"repeat"` // from 1
}

// ID names the step's result file. It depends only on what the step does,
// so a resumed sweep finds the steps it already ran.
func (s Step) ID() string {
	rate := "closed"
	if s.Rate > 0 {
		rate = "r" + strconv.FormatFloat(s.Rate, 'f', -1, 64)
	}
	return fmt.Sprintf("%s_%s_%s_%s_r%d", s.Path, s.Rung, FormatSize(s.Payload), rate, s.Repeat)
}

// stepOverhead is what a step typically takes beyond its warm-up and
// measured window: its client built, its first connections, its cost
// probes, its result written.
const stepOverhead = 300 * time.Millisecond

// StepTime is how long a step of s typically takes: its warm-up, its
// measured window and stepOverhead. The runner's ETA counts it per step
// left.
func (s *Spec) StepTime() time.Duration { return s.Warmup.D() + s.Duration.D() + stepOverhead }

// PlanTime is how long n steps of s typically take (n StepTime), to the
// second: a sweep's whole plan before it starts.
func (s *Spec) PlanTime(n int) time.Duration {
	return (time.Duration(n) * s.StepTime()).Round(time.Second)
}

// Plan lists every step. Paths vary fastest, then rungs, payloads, rates
// and repeats: a machine that drifts during a long sweep drifts for every
// path alike, and each repeat is a full pass.
func (s *Spec) Plan() []Step {
	var out []Step
	for rep := 1; rep <= s.Repeats; rep++ {
		for _, rate := range s.Rates {
			for _, payload := range s.Payloads {
				for _, rung := range s.Ladder {
					for _, p := range s.Paths {
						out = append(out, Step{Index: len(out), Path: p.Name, Rung: rung, Payload: payload, Rate: rate, Repeat: rep})
					}
				}
			}
		}
	}
	return out
}

// PathByName returns the path called name.
func (s *Spec) PathByName(name string) (Path, bool) {
	for _, p := range s.Paths {
		if p.Name == name {
			return p, true
		}
	}
	return Path{}, false
}
