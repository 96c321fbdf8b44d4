package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// IsStdout tells whether an output path names standard output: "-"
// (Stdout), or /dev/stdout and its aliases, which the caller writes to its
// own standard output (never opened anew, which would truncate a file it
// goes to, or replace /dev/stdout itself when run as root).
func IsStdout(path string) bool {
	switch path {
	case Stdout, "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1":
		return true
	}
	return false
}

// Output is one file a command writes: the flag that names it and its
// path ("" for none).
type Output struct{ Flag, Path string }

// CheckOutputs checks a command's outputs before any work: each can be
// written (CheckWritable), at most one goes to standard output
// (IsStdout), and no two name the same file (one would overwrite the
// other). toStdout tells whether one goes to standard output.
func CheckOutputs(outs ...Output) (toStdout bool, err error) {
	var on string // the flag writing to standard output
	for i, o := range outs {
		if o.Path == "" {
			continue
		}
		if IsStdout(o.Path) {
			if on != "" {
				return false, fmt.Errorf("%s and %s both write to standard output (-): give one of them a file", on, o.Flag)
			}
			on = o.Flag
			continue
		}
		if err := CheckWritable(o.Path); err != nil {
			return false, fmt.Errorf("%s: %w", o.Flag, err)
		}
		for _, p := range outs[:i] {
			if p.Path != "" && !IsStdout(p.Path) && SameFile(p.Path, o.Path) {
				return false, fmt.Errorf("%s and %s both name %s: give each its own file", p.Flag, o.Flag, o.Path)
			}
		}
	}
	return on != "", nil
}

// SameFile tells whether two paths name one file: the same path once
// made absolute, or one existing file (a link). A character device (two
// outputs to /dev/null) is not one file to overwrite.
func SameFile(a, b string) bool {
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

// CheckDir checks, before anything starts, that dir can take a results
// directory: an existing directory the process can write in, or a path
// whose nearest existing parent is a directory it can create one in.
// Nothing is left behind. The error does not name dir: the caller does,
// with its flag.
func CheckDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return errors.New("it is a file, not a directory: give a directory for the results (created if missing)")
	case err == nil:
		f, err := os.CreateTemp(dir, ".loadgen-check-*")
		if err != nil {
			return fmt.Errorf("cannot write in this directory: %v", reason(err))
		}
		f.Close()
		return os.Remove(f.Name())
	case !missing(err):
		return reason(err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	child, parent := abs, filepath.Dir(abs)
	for {
		fi, err := os.Stat(parent)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s is a file, not a directory", parent)
			}
			break
		}
		if !missing(err) || parent == filepath.Dir(parent) {
			return reason(err)
		}
		child, parent = parent, filepath.Dir(parent)
	}
	if err := os.Mkdir(child, 0o755); err != nil {
		return fmt.Errorf("cannot create a directory in %s: %v", parent, reason(err))
	}
	return os.Remove(child)
}

// missing tells whether err says a path (or a directory on it) is not there.
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}
