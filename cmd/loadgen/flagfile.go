package main

import (
	"bytes"
	"errors"
	"fmt"
	"loadgen/internal/closest"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// applyFlagFile reads an options file — YAML (or JSON) whose keys are the
// command's long flag names (duration: 10s, workers: [1, 2], modes:
// host-gw,vxlan) — and sets every flag the command line did not, through
// the flags' own parsers: one grammar, one set of checks, the command line
// winning. Every key that is wrong is reported at once.
func applyFlagFile(fl *pflag.FlagSet, path string, skip ...string) error {
	m, err := readFlagFile(path)
	if err != nil {
		return err
	}
	return setFlagsFromFile(fl, path, m, nil, skip)
}

// readFlagFile reads an options file's keys and their values.
func readFlagFile(path string) (map[string]yaml.Node, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("-f: %w", err)
	}
	var m map[string]yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return m, nil
}

// setFlagsFromFile sets the flags of an options file's keys; extra are
// keys the caller took out before (run's url), valid but no flag.
func setFlagsFromFile(fl *pflag.FlagSet, path string, m map[string]yaml.Node, extra, skip []string) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs []string
	for _, k := range keys {
		if err := setFromFile(fl, k, m[k], extra, skip); err != nil {
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
func setFromFile(fl *pflag.FlagSet, k string, n yaml.Node, extra, skip []string) error {
	f := fl.Lookup(k)
	if f == nil || f.Hidden || k == "help" || slices.Contains(skip, k) {
		err := fmt.Sprintf("%q is not an option here (the keys are the command's long flags, as in --help)", k)
		if hint := closest.DidYouMean(k, fileKeys(fl, extra, skip)); hint != "" {
			err += ": " + hint
		}
		return errors.New(err)
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

// fileKeys are the valid keys of an options file, by name (of two as near
// to a typo, the first is suggested).
func fileKeys(fl *pflag.FlagSet, extra, skip []string) []string {
	var names []string
	fl.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Name != "help" && !slices.Contains(skip, f.Name) {
			names = append(names, f.Name)
		}
	})
	names = append(names, extra...)
	slices.Sort(names)
	return names
}
