// Package race tells whether the binary was built with the race detector.
//
// Allocation tests consult it: under -race, sync.Pool drops a share of
// what is put back on purpose and the detector allocates for itself, so
// testing.AllocsPerRun counts what the product never does. The same tests
// run, and must find zero allocations, in the ordinary build (make test).
package race
