package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"loadgen/loadgen"
)

// versionLine is what `loadgen version`, --version and -v print.
func versionLine() string {
	return fmt.Sprintf("loadgen %s (%s, %s/%s)\n", loadgen.Version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print loadgen's version",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprint(cmd.OutOrStdout(), versionLine())
		},
	}
}
