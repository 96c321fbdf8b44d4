package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"loadgen/loadgen/sweep"
	"loadgen/results"
)

// Every finished step keeps a line, in its protocol's unit; a find-max
// probe's line counts probes (the total is not known) and says its verdict.
func TestSweepProgressLines(t *testing.T) {
	run := func(proto string, rps, written float64, requests int64, interrupted bool) *results.Step {
		return &results.Step{Run: &results.Run{Config: results.Config{Protocol: proto}, Interrupted: interrupted, Summary: results.Summary{
			RPS: rps, WritePerSec: written, Requests: requests, Errors: results.Errors{Timeout: 3},
			Latency: results.Latency{P50: results.Duration(210 * time.Microsecond), P99: results.Duration(2 * time.Millisecond)},
		}}}
	}
	st := sweep.Step{Path: "nginx", Rung: sweep.Rung{Connections: 4, Threads: 4}, Payload: 1024, Rate: 1600, Repeat: 2}
	for _, tc := range []struct {
		e    sweep.Event
		want string
	}{
		{sweep.Event{Kind: sweep.StepFinished, Step: st, N: 2, Total: 16, ETA: 40 * time.Second, Result: run("http1", 15079, 0, 45244, false)},
			"[3/16] nginx c4t4 1KiB: 15079 req/s, p50 210us, p99 2.00ms, errors 3 (ETA 40s)"},
		{sweep.Event{Kind: sweep.StepFinished, Step: st, N: 0, Total: 2, Result: run("tcp-stream", 266632, 272.5e6, 500000, false)},
			"[1/2] nginx c4t4 1KiB: 2.18 Gbit/s, errors 3 (ETA 0s)"},
		{sweep.Event{Kind: sweep.StepFinished, Step: st, N: 0, Total: 2, Result: run("tcp-rr", 40798, 0, 500000, false)},
			"[1/2] nginx c4t4 1KiB: 40798 trans/s, p50 210us, p99 2.00ms, errors 3 (ETA 0s)"},
		{sweep.Event{Kind: sweep.StepFinished, Step: st, N: 0, Total: 2, Result: run("grpc-stream", 5210, 0, 500000, false)},
			"[1/2] nginx c4t4 1KiB: 5210 msgs/s, p50 210us, p99 2.00ms, errors 3 (ETA 0s)"},
		{sweep.Event{Kind: sweep.StepFinished, Step: st, N: 0, Total: 2, Result: run("http1", 0, 0, 0, true)},
			"[1/2] nginx c4t4 1KiB: interrupted: no response, errors 3 (ETA 0s)"},
		{sweep.Event{Kind: sweep.StepFinished, Step: st, N: 0, Total: 2, Result: &results.Step{Failed: "cannot connect"}},
			"[1/2] nginx c4t4 1KiB: failed: cannot connect (ETA 0s)"},
		{sweep.Event{Kind: sweep.StepSkipped, Step: st, N: 4, Total: 16},
			"[5/16] nginx c4t4 1KiB: already done"},
		{sweep.Event{Kind: sweep.StepFinished, Step: st, N: 6, Search: 1, Searches: 2, Result: run("http1", 1600, 0, 3200, false),
			Probe: &sweep.Probe{Rate: 1600, Attempt: 2, Why: "p99 2ms is not < 1ms"}},
			"probe 7, search 1/2: nginx c4t4 1KiB at 1600/s (again, #2): misses the SLO (p99 2ms is not < 1ms): 1600 req/s, p50 210us, p99 2.00ms, errors 3"},
		{sweep.Event{Kind: sweep.StepFinished, Step: st, N: 6, Search: 1, Searches: 2, Result: run("http1", 1600, 0, 3200, false),
			Probe: &sweep.Probe{Rate: 1600, Attempt: 2, OK: true, Generator: &sweep.GeneratorState{Saturated: true}, Machine: &results.MachineCost{Saturated: true}}},
			"probe 7, search 1/2: nginx c4t4 1KiB at 1600/s (again, #2): holds: 1600 req/s, p50 210us, p99 2.00ms, errors 3 [G generator saturated] [M machine saturated]"},
	} {
		var b bytes.Buffer
		newSweepProgress(&b, tc.e.Total, false).event(tc.e) // not a terminal: a line per finished step
		if got := strings.TrimSuffix(b.String(), "\n"); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
	var b bytes.Buffer
	p := newSweepProgress(&b, 0, true)
	p.event(sweep.Event{Kind: sweep.StepSkipped, Step: st})
	if p.finish(); b.Len() != 0 {
		t.Errorf("-q printed %q", b.String())
	}
}
