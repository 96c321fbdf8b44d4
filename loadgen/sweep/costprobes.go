package sweep

import (
	"loadgen/results"
	"loadgen/results/cost"
)

// CostProbes are the Probes of results/cost's samplers: a selector in its
// grammar (Selector), sampled every cost.DefaultEvery.
type CostProbes struct{}

// Check parses selector and tells whether what it selects exists now.
func (CostProbes) Check(selector string) error {
	s, err := cost.ParseSelector(selector)
	if err != nil {
		return err
	}
	return s.Resolve()
}

// Start samples what selector selects until the returned stop is called.
func (CostProbes) Start(selector string) (func() results.ProcessCost, error) {
	s, err := cost.ParseSelector(selector)
	if err != nil {
		return nil, err
	}
	sm, err := cost.Start(s, cost.DefaultEvery)
	if err != nil {
		return nil, err
	}
	return func() results.ProcessCost {
		u := sm.Stop()
		return results.ProcessCost{
			Samples: u.Samples, Processes: u.Processes, CPUSeconds: u.CPUSeconds,
			CPUMean: u.CPUMean, CPUMax: u.CPUMax, MemMean: u.MemMean, MemMax: u.MemMax,
		}
	}, nil
}
