// Package ratecheck judges, in tests, how far an open-loop run may fall
// short of its schedule.
//
// A busy machine (CI runs package binaries side by side on two CPUs) can
// stall the generator near the window's end, and the sends due during the
// stall are then late or never made. The engine reports that stall as the
// run's max lag, but a test must not excuse whatever lag the engine reports:
// a pacer that steadily sends at half the rate ends its run seconds late,
// and an allowance of max lag / interval would then excuse every request it
// never sent. Short bounds the lag it excuses by figures the engine cannot
// inflate on its own behalf: a fixed bound, widened only by a stall the test
// causes itself or one an independent Probe saw the machine make during the
// run. A pacer that falls behind steadily passes the bound within the run.
package ratecheck

import (
	"fmt"
	"time"

	"loadgen/internal/race"
	"loadgen/results"
)

// MaxStall is the longest stall of the test machine that excuses missing
// or late sends: tens of milliseconds, wider under the race detector,
// which slows every goroutine several-fold.
func MaxStall() time.Duration {
	if race.Enabled {
		return 500 * time.Millisecond
	}
	return 100 * time.Millisecond
}

// Short returns how many of a schedule's sends at perSec a run may miss:
// at least floor, at most what a stall of MaxStall plus excused (a stall
// the test itself causes, or what a Probe saw) spans. It returns an error
// when the run's lag is longer than that: the engine, not the machine, fell
// behind.
func Short(p *results.Pacing, perSec float64, floor int64, excused time.Duration) (int64, error) {
	if p == nil {
		return 0, fmt.Errorf("no pacing in an open-loop run")
	}
	bound := MaxStall() + excused
	if p.MaxLag.D() > bound {
		return 0, fmt.Errorf("max lag %v: sends fell behind the schedule by more than a busy machine's stall (%v) explains", p.MaxLag.D(), bound)
	}
	interval := time.Duration(float64(time.Second) / perSec)
	return max(floor, int64(p.MaxLag.D()/interval)), nil
}

// Achieved checks that an open-loop run of window at perSec achieved the
// rate asked within tol (0.02: 2%) either way. Short's bound on the lag
// holds first; a stall it excuses widens the shortfall allowed only by the
// sends it spans past tol of the schedule: tol already covers a shorter
// one.
func Achieved(p *results.Pacing, perSec float64, window time.Duration, tol float64, floor int64, excused time.Duration) error {
	n, err := Short(p, perSec, floor, excused)
	if err != nil {
		return err
	}
	below := max(tol, float64(n)/(perSec*window.Seconds()))
	if dev := p.Achieved/perSec - 1; dev < -below || dev > tol {
		return fmt.Errorf("achieved %.1f/s for %.0f/s asked (%+.2f%%), want within %+.2f%% and %+.2f%% (the max lag %v spans %d sends)",
			p.Achieved, perSec, 100*dev, -100*below, 100*tol, p.MaxLag.D(), n)
	}
	return nil
}

// Probe measures, independently of the engine, how long the machine kept
// this process from running: the longest oversleep of a goroutine that
// sleeps 5 ms at a time, or, on Linux, the time the process's threads
// waited on a run queue during the probe, whichever is longer. The second
// covers a stall of the engine's thread that the probe's own thread, on
// the other CPU, did not share; it sums every thread's waits, so it bounds
// any one stall from above.
type Probe struct {
	stop  chan struct{}
	done  chan time.Duration
	delay time.Duration
}

// StartProbe starts a Probe; Stop ends it.
func StartProbe() *Probe {
	p := &Probe{stop: make(chan struct{}), done: make(chan time.Duration, 1), delay: runDelay()}
	started := make(chan struct{})
	go func() {
		const tick = 5 * time.Millisecond
		var worst time.Duration
		t := time.NewTimer(tick)
		defer t.Stop()
		close(started)
		for {
			asked := time.Now()
			select {
			case <-p.stop:
				// A stall that ended just now counts too.
				p.done <- max(worst, time.Since(asked)-tick)
				return
			case <-t.C:
				worst = max(worst, time.Since(asked)-tick)
				t.Reset(tick)
			}
		}
	}()
	<-started
	return p
}

// Stop ends the probe and returns the longest stall it saw.
func (p *Probe) Stop() time.Duration {
	close(p.stop)
	return max(<-p.done, runDelay()-p.delay)
}
