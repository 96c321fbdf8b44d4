// Package store saves and loads results: JSON written atomically (a
// temporary file in the same directory, synced, then renamed), read back
// with a schema check.
package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"loadgen/results"
)

// WriteRun writes run to path as indented JSON, atomically: a reader sees
// the old file or the new one, never a part.
func WriteRun(path string, run *results.Run) error { return WriteJSON(path, run) }

// WriteJSON writes v to path as indented JSON, atomically.
func WriteJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return WriteFile(path, append(b, '\n'))
}

// CheckWritable tells, before any work, whether WriteFile could write
// path: its directory exists and takes a new file. The error names path.
func CheckWritable(path string) error {
	dir := filepath.Dir(path)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return fmt.Errorf("cannot write %s: directory %s does not exist", path, dir)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("cannot write %s: it is a directory", path)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return namePath(path, err)
	}
	tmp.Close()
	return os.Remove(tmp.Name())
}

// namePath makes an error about the temporary file name the file the user
// asked for.
func namePath(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: "write", Path: path, Err: pe.Err}
	}
	return fmt.Errorf("write %s: %w", path, err)
}

// WriteFile writes data to path atomically. Errors name path, not the
// temporary file beside it.
func WriteFile(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return namePath(path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
			err = namePath(path, err)
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// ReadRun loads a run written by WriteRun, of this schema or an older
// one. It refuses files of a newer schema and files that are not a loadgen
// result.
func ReadRun(path string) (*results.Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	run, err := DecodeRun(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return run, nil
}

// DecodeRun parses a run from JSON.
func DecodeRun(b []byte) (*results.Run, error) {
	var run results.Run
	if err := decode(b, &run); err != nil {
		return nil, err
	}
	return &run, nil
}

// ReadStep loads one step of a sweep.
func ReadStep(path string) (*results.Step, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var st results.Step
	if err := decode(b, &st); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &st, nil
}

// decode checks that b is a loadgen document of a schema this build
// understands, then decodes it into v: a document of an older schema is
// upgraded to the current format first (upgrade.go).
func decode(b []byte, v any) error {
	var head struct {
		Schema *int   `json:"schema"`
		Tool   string `json:"tool"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return fmt.Errorf("not a loadgen result (invalid JSON: %v)", err)
	}
	if head.Schema == nil || head.Tool != "loadgen" {
		return errors.New("not a loadgen result (no schema/tool fields)")
	}
	if *head.Schema > results.SchemaVersion {
		return fmt.Errorf("result schema %d is newer than this loadgen understands (%d): upgrade loadgen", *head.Schema, results.SchemaVersion)
	}
	if *head.Schema < 1 {
		return fmt.Errorf("invalid result schema %d", *head.Schema)
	}
	if *head.Schema < results.SchemaVersion {
		up, err := upgrade(b, *head.Schema)
		if err != nil {
			return fmt.Errorf("invalid result (schema %d): %v", *head.Schema, err)
		}
		b = up
	}
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(v); err != nil {
		return fmt.Errorf("invalid result: %v", err)
	}
	return nil
}
