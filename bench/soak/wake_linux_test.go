package main

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// The timer's thread sleeps n times for every (so the run lasts at least
// n × every), each kind of wake-up is charged some CPU, and bad counts are
// refused. A timer's cost at or above its sleep would be the wall clock's
// time, not CPU: 2 ms sleeps leave room for the CPU a busy machine
// charges a wake-up (285 µs once, beside four builds, against 200 µs
// sleeps).
func TestMeasureWake(t *testing.T) {
	const n, every = 100, 2 * time.Millisecond
	start := time.Now()
	c, err := measureWake(n, every)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < n*every {
		t.Errorf("%d sleeps of %v took %v: the timer did not sleep", n, every, took)
	}
	if c.Timer <= 0 || c.Thread <= 0 || c.Timer > every || c.Thread > time.Millisecond {
		t.Errorf("wake-up costs %+v: want each above 0, the timer's below its sleep", c)
	}
	for _, bad := range [][2]int{{0, 1}, {1, 0}, {-1, 1}} {
		if _, err := measureWake(bad[0], time.Duration(bad[1])); err == nil {
			t.Errorf("measureWake(%d, %d) took bad input", bad[0], bad[1])
		}
	}
}

// Two threads waking each other while collections stop the world: a thread
// blocked in a pipe's read must let the stop through, or the stop waits for
// it and it for the other thread, which the stop holds (CI's race run hung
// here for its whole timeout).
func TestThreadWakeBesideCollections(t *testing.T) {
	collectBeside(t)
	for range 20 {
		if c, err := threadWake(2000); err != nil || c <= 0 {
			t.Fatalf("threadWake: %v, %v", c, err)
		}
	}
}

// The timer's thread sleeping while collections stop the world: its waits
// must let the stop through, or the runtime signals it again and again,
// each signal ends a wait early and restarts it, and the signals' handling
// is charged to the wake-ups (13.7 ms a 2 ms sleep, 26 s for 100, once in
// CI).
func TestTimerWakeBesideCollections(t *testing.T) {
	collectBeside(t)
	const n, every = 100, 2 * time.Millisecond
	c, err := timerWake(n, every)
	if err != nil {
		t.Fatal(err)
	}
	if c <= 0 || c > every {
		t.Errorf("a timer's wake-up beside collections cost %v of CPU: want above 0 and below its %v sleep", c, every)
	}
}

// collectBeside runs collections back to back until the test ends.
func collectBeside(t *testing.T) {
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			runtime.GC()
		}
	}()
	t.Cleanup(func() { stop.Store(true); <-done })
}
