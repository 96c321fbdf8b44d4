package main

import (
	"io"

	"loadgen/results/store"
)

// isStdout tells whether an output path names standard output
// (store.IsStdout: "-", /dev/stdout and its aliases).
func isStdout(path string) bool { return store.IsStdout(path) }

// writeOutput writes an output: to stdout for "-", else to the file,
// without destroying what is there (store.WriteFile: a link's target is
// replaced, a device or FIFO written into).
func writeOutput(stdout io.Writer, path string, data []byte) error {
	if isStdout(path) {
		_, err := stdout.Write(data)
		return err
	}
	return store.WriteFile(path, data)
}

// output is one file a command writes: the flag that names it and its
// path ("" for none).
type output struct{ flag, path string }

// checkOutputs checks a command's outputs before any work
// (store.CheckOutputs). toStdout tells whether one goes to standard
// output: the command's summary then goes to standard error, so that
// `loadgen run --json - URL | jq` reads JSON only.
func checkOutputs(outs ...output) (toStdout bool, err error) {
	so := make([]store.Output, len(outs))
	for i, o := range outs {
		so[i] = store.Output{Flag: o.flag, Path: o.path}
	}
	return store.CheckOutputs(so...)
}
