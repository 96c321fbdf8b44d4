package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// checkOutDir checks, before anything starts, that dir can take a results
// directory: an existing directory loadgen can write in, or a path whose
// nearest existing parent is a directory it can create one in. Nothing is
// left behind. flag names the option in the error ("-o").
func checkOutDir(flag, dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case err == nil && !fi.IsDir():
		return fmt.Errorf("%s %s: it is a file, not a directory: give a directory for the results (created if missing)", flag, dir)
	case err == nil:
		f, err := os.CreateTemp(dir, ".loadgen-check-*")
		if err != nil {
			return fmt.Errorf("%s %s: cannot write in this directory: %v", flag, dir, reason(err))
		}
		f.Close()
		return os.Remove(f.Name())
	case !missing(err):
		return fmt.Errorf("%s %s: %v", flag, dir, reason(err))
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("%s %s: %v", flag, dir, err)
	}
	child, parent := abs, filepath.Dir(abs)
	for {
		fi, err := os.Stat(parent)
		if err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s %s: %s is a file, not a directory", flag, dir, parent)
			}
			break
		}
		if !missing(err) || parent == filepath.Dir(parent) {
			return fmt.Errorf("%s %s: %v", flag, dir, reason(err))
		}
		child, parent = parent, filepath.Dir(parent)
	}
	if err := os.Mkdir(child, 0o755); err != nil {
		return fmt.Errorf("%s %s: cannot create a directory in %s: %v", flag, dir, parent, reason(err))
	}
	return os.Remove(child)
}

// missing tells whether err says a path (or a directory on it) is not there.
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// reason is an error without the path and operation it repeats.
func reason(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
