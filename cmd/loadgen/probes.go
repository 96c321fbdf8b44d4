package main

import (
	"loadgen/results"
	"loadgen/results/cost"
)

// costProbes gives the sweep results/cost's samplers.
type costProbes struct{}

func (costProbes) Check(selector string) error {
	s, err := cost.ParseSelector(selector)
	if err != nil {
		return err
	}
	return s.Resolve()
}

func (costProbes) Start(selector string) (func() results.ProcessCost, error) {
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
