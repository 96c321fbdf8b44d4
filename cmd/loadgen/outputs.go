package main

import (
	"io"

	"loadgen/results/store"
)

// isStdout tells whether an output path names standard output
// (store.IsStdout: "-", /dev/stdout and its aliases). Only the files of
// sweep, size and study use it; call store.IsStdout elsewhere.
func isStdout(path string) bool { return store.IsStdout(path) }

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
