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

// Type is stringArray's, so that an options file's list (-f: label:
// [mesh=istio, build=42]) sets one label per item; --help names the value
// KEY=VALUE from the usage's quotes.
func (v labelsValue) Type() string { return "stringArray" }

// GetSlice is each label as its flag's value, KEY=VALUE, keys sorted (a
// resume command's flags: flagWords).
func (v labelsValue) GetSlice() []string {
	out := make([]string, 0, len(*v.p))
	for _, k := range v.p.Keys() {
		out = append(out, k+"="+(*v.p)[k])
	}
	return out
}

// labelFlag registers --label on a command that runs load.
func labelFlag(fl *pflag.FlagSet, p *results.Labels) {
	fl.Var(labelsValue{p}, "label", "name the run: `KEY=VALUE` (repeatable), carried into its JSON, reports, CSV, JUnit properties and Prometheus series; compare matches runs by them, e.g. --label mesh=istio --label build=42")
}
