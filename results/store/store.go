// Package store saves and loads results: JSON written atomically (a
// temporary file in the same directory, synced, then renamed) where the
// path is a file, through where it is a device, FIFO or socket
// (write.go), read back with a schema check.
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

// WriteRun writes run to path as indented JSON (WriteFile): a reader sees
// the old file or the new one, never a part.
func WriteRun(path string, run *results.Run) error { return WriteJSON(path, run) }

// WriteJSON writes v to path as indented JSON (WriteFile).
func WriteJSON(path string, v any) error {
	b, err := EncodeJSON(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return WriteFile(path, b)
}

// EncodeJSON is v as WriteJSON writes it: indented, ending in a newline.
func EncodeJSON(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
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
