package main

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"loadgen/loadgen/sweep"
)

// resumeFlags are, for the command that resumes cmd's run
// (sweep.ResumeCommand), the words of the flags given on the command
// line that the rule of what a resume keeps (sweep.ResumeFlags) keeps, in
// the order cmd lists them.
func resumeFlags(cmd *cobra.Command) []string {
	var names []string
	cmd.Flags().VisitAll(func(fl *pflag.Flag) { names = append(names, fl.Name) })
	return flagWords(cmd, sweep.ResumeFlags(names)...)
}

// flagWords repeats the flags given on the command line among names, for
// a resume hint: a bool flag as --NAME, any other as --NAME VALUE, once
// per value of a list.
func flagWords(cmd *cobra.Command, names ...string) []string {
	var words []string
	for _, n := range names {
		fl := cmd.Flags().Lookup(n)
		if fl == nil || !fl.Changed {
			continue
		}
		if fl.Value.Type() == "bool" {
			words = append(words, "--"+n)
			continue
		}
		vals := []string{fl.Value.String()}
		if sv, ok := fl.Value.(interface{ GetSlice() []string }); ok {
			vals = sv.GetSlice()
		}
		for _, v := range vals {
			words = append(words, "--"+n, v)
		}
	}
	return words
}
