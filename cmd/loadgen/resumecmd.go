package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"loadgen/internal/shellquote"
	"loadgen/loadgen/sweep"
)

// resumeArgs repeats, for the hint that resumes cmd's run, the flags
// given on the command line that the rule of what a resume keeps
// (sweep.ResumeFlags) keeps, in the order cmd lists them.
func resumeArgs(cmd *cobra.Command) string {
	var names []string
	cmd.Flags().VisitAll(func(fl *pflag.Flag) { names = append(names, fl.Name) })
	return flagArgs(cmd, sweep.ResumeFlags(names)...)
}

// flagArgs repeats the flags given on the command line among names, for a
// resume hint, quoted for a shell.
func flagArgs(cmd *cobra.Command, names ...string) string {
	var b strings.Builder
	for _, n := range names {
		fl := cmd.Flags().Lookup(n)
		if fl == nil || !fl.Changed {
			continue
		}
		if fl.Value.Type() == "bool" {
			fmt.Fprintf(&b, "--%s ", n)
			continue
		}
		vals := []string{fl.Value.String()}
		if sv, ok := fl.Value.(interface{ GetSlice() []string }); ok {
			vals = sv.GetSlice()
		}
		for _, v := range vals {
			fmt.Fprintf(&b, "--%s %s ", n, shellquote.Quote(v))
		}
	}
	return b.String()
}
