package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"loadgen/loadgen/client"
)

// runFile is what run reads from -f: its flags' keys, and url, the target
// the command line gives as its argument.
type runFile struct {
	path string // -f
	url  string // the target: the argument, or the file's url
}

// register adds -f to run.
func (r *runFile) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&r.path, "file", "f", "", "an options file, YAML or JSON, e.g. run.yaml: the long flags as keys (connections: 50, header: [..]) and url; flags and LOADGEN_ variables win over it")
}

// apply reads -f into the flags neither the command line nor the
// environment gave, then takes the target: the argument, or the file's
// url. It runs after the environment's flags are set (the root's
// PersistentPreRunE), so that --targets from either counts.
func (r *runFile) apply(cmd *cobra.Command, f *runFlags, args []string) error {
	fileURL := ""
	if r.path != "" {
		m, err := readFlagFile(r.path)
		if err != nil {
			return err
		}
		if n, ok := m["url"]; ok {
			if n.Kind != yaml.ScalarNode || n.Value == "" {
				return fmt.Errorf("%s: line %d: url: want one URL", r.path, n.Line)
			}
			fileURL = n.Value
			delete(m, "url")
		}
		if err := setFlagsFromFile(cmd.Flags(), r.path, m, []string{"url"}, []string{"file"}); err != nil {
			return err
		}
	}
	url, err := client.ResolveTarget(args, r.path, fileURL, f.targets != "")
	if err != nil {
		return err
	}
	r.url = url
	return nil
}
