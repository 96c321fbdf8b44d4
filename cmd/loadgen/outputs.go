package main

import (
	"io"

	"loadgen/results/store"
)

// writeOutput writes an output: to stdout for "-", else to the file,
// without destroying what is there (store.WriteFile: a link's target is
// replaced, a device or FIFO written into).
func writeOutput(stdout io.Writer, path string, data []byte) error {
	if store.IsStdout(path) {
		_, err := stdout.Write(data)
		return err
	}
	return store.WriteFile(path, data)
}
