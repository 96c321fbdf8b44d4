package allocs_test

import (
	"testing"

	"loadgen/internal/allocs"
)

var sink []byte

// One allocation every other run: testing.AllocsPerRun reads it as zero
// (its integer division), Count sees every one.
func TestCountSeesEveryOtherRun(t *testing.T) {
	i := 0
	f := func() {
		i++
		if i%2 == 0 {
			sink = make([]byte, 64+i%3)
		}
	}
	if per := testing.AllocsPerRun(1000, f); per != 0 {
		t.Logf("AllocsPerRun now reads %v (Go changed its rounding?)", per)
	}
	if n := allocs.Count(1000, f); n < 500 || n > 501 {
		t.Fatalf("Count: %d allocations in 1000 runs allocating every other run, want 500", n)
	}
}

// Allocations that come and go (another goroutine's, in one count) are
// left out; what f allocates on every run is in every count and stays.
func TestCountLeavesOutPassingNoise(t *testing.T) {
	i := 0
	noisy := func() {
		i++
		if i > 1 && i <= 51 { // the first count's first 50 runs, after the warm-up
			sink = make([]byte, 64+i%3)
		}
	}
	if n := allocs.Count(1000, noisy); n != 0 {
		t.Errorf("Count: %d allocations, want 0: the 50 were in one count only", n)
	}
	always := func() { sink = make([]byte, 64) }
	if n := allocs.Count(1000, always); n < 1000 {
		t.Errorf("Count: %d allocations in 1000 runs allocating each time, want 1000", n)
	}
}
