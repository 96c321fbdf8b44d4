package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"loadgen/results/store"
)

// isStdout tells whether an output path names standard output: "-", or
// /dev/stdout and its aliases, written to the command's own standard
// output (never opened anew, which would truncate a file it goes to).
func isStdout(path string) bool {
	switch path {
	case store.Stdout, "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1":
		return true
	}
	return false
}

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

// checkOutputs checks a command's outputs before any work: each can be
// written, at most one goes to standard output ("-"), and no two name the
// same file (one would overwrite the other). toStdout tells whether one
// goes to standard output: the command's summary then goes to standard
// error, so that `loadgen run --json - URL | jq` reads JSON only.
func checkOutputs(outs ...output) (toStdout bool, err error) {
	var on string // the flag writing to standard output
	for i, o := range outs {
		if o.path == "" {
			continue
		}
		if isStdout(o.path) {
			if on != "" {
				return false, fmt.Errorf("%s and %s both write to standard output (-): give one of them a file", on, o.flag)
			}
			on = o.flag
			continue
		}
		if err := store.CheckWritable(o.path); err != nil {
			return false, fmt.Errorf("%s: %w", o.flag, err)
		}
		for _, p := range outs[:i] {
			if p.path != "" && !isStdout(p.path) && sameFile(p.path, o.path) {
				return false, fmt.Errorf("%s and %s both name %s: give each its own file", p.flag, o.flag, o.path)
			}
		}
	}
	return on != "", nil
}

// sameFile tells whether two paths name one file: the same path once
// made absolute, or one existing file (a link). A character device (two
// outputs to /dev/null) is not one file to overwrite.
func sameFile(a, b string) bool {
	if fi, err := os.Stat(a); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		return false
	}
	if aa, err := filepath.Abs(a); err == nil {
		if bb, err := filepath.Abs(b); err == nil && aa == bb {
			return true
		}
	}
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}
