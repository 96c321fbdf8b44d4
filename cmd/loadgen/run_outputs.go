package main

import "loadgen/results/store"

// checkOutputs checks, before any load, the run's output files
// (store.CheckOutputs) and tells whether one goes to standard output: the
// summary then goes to standard error, so that `loadgen run --json - URL
// | jq` reads JSON only.
func (f *runFlags) checkOutputs() (toStdout bool, err error) {
	return store.CheckOutputs(store.Output{Flag: "--json", Path: f.jsonOut}, store.Output{Flag: "--hlog", Path: f.hlog},
		store.Output{Flag: "--junit", Path: f.check.junit})
}
