package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"loadgen/loadgen"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print loadgen's version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintf(cmd.OutOrStdout(), "loadgen %s (%s, %s/%s)\n", loadgen.Version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
		},
	}
}
