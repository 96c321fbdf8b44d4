// Package store saves and loads results: JSON written atomically (a
// temporary file in the same directory, synced, then renamed), read back
// with a schema check.
package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"loadgen/results"
)

// WriteRun writes run to path as indented JSON, atomically: a reader sees
// the old file or the new one, never a part.
func WriteRun(path string, run *results.Run) error {
	b, err := json.MarshalIndent(run, "", "  ")
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	return WriteFile(path, append(b, '\n'))
}

// WriteFile writes data to path atomically.
func WriteFile(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
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

// ReadRun loads a run written by WriteRun. It refuses files of a newer
// schema and files that are not a loadgen result.
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
	var head struct {
		Schema *int   `json:"schema"`
		Tool   string `json:"tool"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("not a loadgen result (invalid JSON: %v)", err)
	}
	if head.Schema == nil || head.Tool != "loadgen" {
		return nil, errors.New("not a loadgen result (no schema/tool fields)")
	}
	if *head.Schema > results.SchemaVersion {
		return nil, fmt.Errorf("result schema %d is newer than this loadgen understands (%d): upgrade loadgen", *head.Schema, results.SchemaVersion)
	}
	if *head.Schema < 1 {
		return nil, fmt.Errorf("invalid result schema %d", *head.Schema)
	}
	var run results.Run
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&run); err != nil {
		return nil, fmt.Errorf("invalid result: %v", err)
	}
	return &run, nil
}
