package main

import (
	"github.com/spf13/pflag"

	"loadgen/results"
)

// labelsValue is --label KEY=VALUE, repeatable: each is checked as it is
// given (results.Labels.Add), so a bad one is a usage error (exit 2).
type labelsValue struct{ p *results.Labels }

func (v labelsValue) Set(s string) error {
	if *v.p == nil {
		*v.p = results.Labels{}
	}
	return v.p.Add(s)
}
func (v labelsValue) String() string { return v.p.String() }
func (v labelsValue) Type() string   { return "key=value" }

// labelFlag registers --label on a command that runs load.
func labelFlag(fl *pflag.FlagSet, p *results.Labels) {
	fl.Var(labelsValue{p}, "label", "name the run: KEY=VALUE (repeatable), carried into its JSON, reports, CSV, JUnit properties and Prometheus series; compare matches runs by them, e.g. --label mesh=istio --label build=42")
}
