package main

import (
	"github.com/spf13/cobra"

	"loadgen/loadgen/client"
	"loadgen/meshes/k8s"
)

// registerCompletions gives shell completion the values of the flags
// that take one of a known set: -p (the protocols), --mesh, --class (for
// the --mesh given, every class without one) and k8s's --mode.
func registerCompletions(root *cobra.Command) {
	values := func(vs []string) cobra.CompletionFunc {
		return func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return vs, cobra.ShellCompDirectiveNoFileComp
		}
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		fl := c.Flags()
		if f := fl.Lookup("protocol"); f != nil && f.Shorthand == "p" {
			c.RegisterFlagCompletionFunc("protocol", values(client.Protocols()))
		}
		if fl.Lookup("mesh") != nil {
			c.RegisterFlagCompletionFunc("mesh", values(k8s.Meshes))
		}
		if fl.Lookup("class") != nil {
			c.RegisterFlagCompletionFunc("class", classCompletion)
		}
		if fl.Lookup("mode") != nil && fl.Lookup("mesh") != nil {
			c.RegisterFlagCompletionFunc("mode", values(k8s.Modes))
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// classCompletion suggests the classes of the --mesh on the command line,
// or of every mesh that takes one.
func classCompletion(cmd *cobra.Command, _ []string, _ string) ([]string, cobra.ShellCompDirective) {
	mesh, _ := cmd.Flags().GetString("mesh")
	return k8s.Classes(mesh), cobra.ShellCompDirectiveNoFileComp
}
