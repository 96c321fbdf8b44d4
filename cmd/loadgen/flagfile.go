package main

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// applyFlagFile reads an options file — YAML whose keys are the command's
// long flag names (duration: 10s, workers: [1, 2], modes: host-gw,vxlan) —
// and sets every flag the command line did not, through the flags' own
// parsers: one grammar, one set of checks, the command line winning.
// Every key that is wrong is reported at once.
func applyFlagFile(fl *pflag.FlagSet, path string, skip ...string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("-f: %w", err)
	}
	var m map[string]yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&m); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs []string
	for _, k := range keys {
		if err := setFromFile(fl, k, m[k], skip); err != nil {
			errs = append(errs, err.Error())
		}
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("%s: %s", path, errs[0])
	}
	return fmt.Errorf("%s: %d keys are wrong: %s", path, len(errs), strings.Join(errs, "; "))
}

// setFromFile sets flag k from an options file's node n, unless the
// command line gave it.
func setFromFile(fl *pflag.FlagSet, k string, n yaml.Node, skip []string) error {
	f := fl.Lookup(k)
	if f == nil || f.Hidden || k == "help" || slices.Contains(skip, k) {
		return fmt.Errorf("%q is not an option here (the keys are the command's long flags, as in --help)", k)
	}
	if f.Changed {
		return nil // the command line wins
	}
	value := n.Value
	if n.Kind == yaml.SequenceNode {
		var parts []string
		for _, c := range n.Content {
			parts = append(parts, c.Value)
		}
		value = strings.Join(parts, ",")
	} else if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: %s: want a value or a list", n.Line, k)
	}
	if f.Value.Type() == "stringArray" || f.Value.Type() == "stringSlice" {
		for _, c := range n.Content {
			if err := fl.Set(k, c.Value); err != nil {
				return fmt.Errorf("line %d: %s: %v", n.Line, k, err)
			}
		}
		if n.Kind == yaml.SequenceNode {
			return nil
		}
	}
	if err := fl.Set(k, value); err != nil {
		return fmt.Errorf("line %d: %s: %v", n.Line, k, err)
	}
	return nil
}
