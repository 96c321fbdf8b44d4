package heldp

import (
	"runtime"
	"testing"
)

// Loops keep their Ps only while one is left for the rest of the process.
func TestTakeLeavesAP(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	if !Take(2) {
		t.Fatal("2 loops with 3 Ps: want them to keep their Ps")
	}
	if Take(1) {
		t.Fatal("a third loop with 3 Ps would leave none for the rest: want it not to keep one")
	}
	Give(2)
	if Take(3) {
		t.Fatal("3 loops with 3 Ps: want them not to keep theirs")
	}
	restore := Refuse()
	if Take(1) {
		t.Fatal("Take while refused")
	}
	restore()
	if n := Held(); n != 0 {
		t.Fatalf("%d Ps counted as kept after every loop let go", n)
	}
}

// Without the runtime's preemption signal no loop may keep its P: a stop
// of the world would wait for its wait.
func TestAsyncPreempt(t *testing.T) {
	for godebug, want := range map[string]bool{
		"":                                    true,
		"asyncpreemptoff=0":                   true,
		"asyncpreemptoff=1":                   false,
		"gctrace=1,asyncpreemptoff=1":         false,
		"asyncpreemptoff=1,asyncpreemptoff=0": true,
		"xasyncpreemptoff=1":                  true,
	} {
		if got := asyncPreempt(godebug); got != want {
			t.Errorf("GODEBUG=%q: preemptible %v, want %v", godebug, got, want)
		}
	}
}
