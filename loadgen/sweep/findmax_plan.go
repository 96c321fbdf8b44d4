package sweep

import "time"

// FindMaxPlan is what a find-max sweep will do (--dry-run): its searches,
// one per path × rung × payload, in the order they run, and the rules
// every search follows. How many probes a search makes depends on what
// they measure.
type FindMaxPlan struct {
	Start   float64 // the first rate, requests/s
	Ceiling float64 // the highest rate probed
	// The bracket is bisected until its ends are within Close of each other
	// (a share of the lower), or Bisections times in a row.
	Close      float64
	Bisections int
	// A rate holds when Agree of at most Confirmations probes held, and
	// fails on Agree misses.
	Confirmations, Agree int
	PerProbe             time.Duration // warm-up + measured duration
	// ProbesLo and ProbesHi are how many probes a search typically makes
	// (the search's tests: 15 to 33), for how long a search takes.
	ProbesLo, ProbesHi int
	Searches           []FindMaxSearch
}

// The probes a search typically makes: FindMaxPlan's ProbesLo, ProbesHi.
const typicalProbesLo, typicalProbesHi = 15, 35

// FindMaxSearch is one search of the plan and its first probe.
type FindMaxSearch struct {
	Path    string
	Rung    Rung
	Payload int
	First   Step
}

// FindMaxPlan is the plan FindMax follows for s.
func (s *Spec) FindMaxPlan() FindMaxPlan {
	p := FindMaxPlan{Start: s.findMaxStart(), Ceiling: findMaxCeiling, Close: findMaxClose, Bisections: findMaxBisect,
		Confirmations: confirmations, Agree: agree, PerProbe: s.Warmup.D() + s.Duration.D(),
		ProbesLo: typicalProbesLo, ProbesHi: typicalProbesHi}
	for _, payload := range s.Payloads {
		for _, rung := range s.Ladder {
			for _, path := range s.Paths {
				first := Step{Path: path.Name, Rung: rung, Payload: payload, Rate: p.Start, Repeat: 1}
				p.Searches = append(p.Searches, FindMaxSearch{Path: path.Name, Rung: rung, Payload: payload, First: first})
			}
		}
	}
	return p
}

// SearchTime is how long one search typically takes, from its fewest to
// its most probes, to the second.
func (p FindMaxPlan) SearchTime() (lo, hi time.Duration) {
	return p.probesTime(p.ProbesLo), p.probesTime(p.ProbesHi)
}

// TotalTime is how long all the searches typically take, to the second.
func (p FindMaxPlan) TotalTime() (lo, hi time.Duration) {
	return p.probesTime(p.ProbesLo * len(p.Searches)), p.probesTime(p.ProbesHi * len(p.Searches))
}

func (p FindMaxPlan) probesTime(n int) time.Duration {
	return (time.Duration(n) * p.PerProbe).Round(time.Second)
}
