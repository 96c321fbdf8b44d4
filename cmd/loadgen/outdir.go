package main

import (
	"fmt"

	"loadgen/results/store"
)

// checkOutDir checks, before anything starts, that dir can take a results
// directory (store.CheckDir). flag names the option in the error ("-o").
func checkOutDir(flag, dir string) error {
	if err := store.CheckDir(dir); err != nil {
		return fmt.Errorf("%s %s: %w", flag, dir, err)
	}
	return nil
}
