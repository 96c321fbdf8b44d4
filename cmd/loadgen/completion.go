package main

import (
	"github.com/spf13/cobra"

	"loadgen/loadgen/client"
	"loadgen/meshes/k8s"
)

// classesByMesh are the classes --class suggests for each --mesh: the
// GatewayClasses and IngressClasses of the implementations docs/kubernetes.md
// names (any other name is accepted as typed).
var classesByMesh = map[string][]string{
	k8s.MeshGateway:      {"nginx", "eg", "istio", "cilium", "traefik", k8s.ClassLattice},
	k8s.MeshIngress:      {"traefik", "haproxy", "contour"},
	k8s.MeshIngressNginx: {"nginx"},
}

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
	if cs, ok := classesByMesh[mesh]; ok {
		return cs, cobra.ShellCompDirectiveNoFileComp
	}
	var all []string
	seen := map[string]bool{}
	for _, m := range []string{k8s.MeshGateway, k8s.MeshIngress, k8s.MeshIngressNginx} {
		for _, c := range classesByMesh[m] {
			if !seen[c] {
				seen[c] = true
				all = append(all, c)
			}
		}
	}
	return all, cobra.ShellCompDirectiveNoFileComp
}
