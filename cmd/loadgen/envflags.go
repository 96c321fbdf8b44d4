package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// envPrefix starts the environment variable of every flag: LOADGEN_ and
// the flag's long name upper-cased, dashes as underscores
// (--max-errors: LOADGEN_MAX_ERRORS).
const envPrefix = "LOADGEN_"

// envName is the environment variable of flag name.
func envName(name string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// applyEnv sets every flag of cmd the command line did not from its
// LOADGEN_ variable, through the flag's own parser, so that an options
// file (-f), read after, fills only what neither gave: flag > environment
// > file > default. A repeatable flag takes one value per line. The error
// of a bad value names the variable.
func applyEnv(cmd *cobra.Command, lookup func(string) (string, bool)) error {
	var err error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if err != nil || f.Changed || !envFlag(f) {
			return
		}
		v, ok := lookup(envName(f.Name))
		if !ok {
			return
		}
		values := []string{v}
		if t := f.Value.Type(); t == "stringArray" || t == "stringSlice" {
			values = strings.Split(strings.TrimRight(v, "\n"), "\n")
		}
		for _, s := range values {
			if serr := cmd.Flags().Set(f.Name, s); serr != nil {
				err = fmt.Errorf("%s=%q: %v", envName(f.Name), v, serr)
				return
			}
		}
	})
	return err
}

// envFlag says whether a flag may come from the environment: not help,
// --version nor a hidden flag.
func envFlag(f *pflag.Flag) bool {
	return !f.Hidden && f.Name != "help" && f.Name != "version"
}

// flagEnvNames are the LOADGEN_ variables of every flag of every command.
// Set by init: newRoot's commands start children (childEnv), a cycle for
// a variable's initialiser.
var flagEnvNames func() map[string]bool

func init() { flagEnvNames = sync.OnceValue(commandEnvNames) }

func commandEnvNames() map[string]bool {
	names := map[string]bool{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) { names[envName(f.Name)] = true })
		c.PersistentFlags().VisitAll(func(f *pflag.Flag) { names[envName(f.Name)] = true })
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot(io.Discard, io.Discard))
	return names
}

// childEnv is the environment of a loadgen process this one starts (a
// target it serves), without the LOADGEN_ variables of flags: they were
// meant for this command, and the child's command line says all it needs
// (a client certificate for run is not a certificate for serve).
func childEnv() []string {
	names := flagEnvNames()
	var out []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !names[k] {
			out = append(out, kv)
		}
	}
	return out
}
