// Package worker is one worker of a distributed run and what the
// coordinator reads back from it: its share of a step's load (ShareOf),
// its clock against the API server's (MeasureOffset), the wait for the
// start instant (WaitStart), `loadgen k8s worker` itself (Run), the one
// log line that carries its result (Report), and the collection of an
// Indexed Job's workers' reports through the API server (Collect).
package worker

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"loadgen/results"
)

// Share is one worker's part of a step's load.
type Share struct {
	Connections int
	Threads     int
	Rate        float64
}

// ShareOf splits connections and threads over the workers as evenly as
// whole numbers allow (the first ones get the remainder) and the rate
// exactly. Every worker needs at least one connection.
func ShareOf(connections, threads int, rate float64, workers, index int) (Share, error) {
	if workers < 1 || index < 0 || index >= workers {
		return Share{}, fmt.Errorf("worker %d of %d: no such worker", index, workers)
	}
	if connections < workers {
		return Share{}, fmt.Errorf("%d connections cannot be shared by %d workers: give each at least one (fewer --workers, or a larger rung)", connections, workers)
	}
	split := func(n int) int {
		s := n / workers
		if index < n%workers {
			s++
		}
		return s
	}
	s := Share{Connections: split(connections), Threads: max(1, split(threads)), Rate: rate / float64(workers)}
	s.Threads = min(s.Threads, s.Connections)
	return s, nil
}

// ReportMarker starts the one log line that carries a worker's result.
// The coordinator reads it from the worker container's log through the
// API server (pods/log): that works on any cluster, with no Role for the
// workers and no volume, and survives the sidecars a mesh injects.
const ReportMarker = "LOADGEN-WORKER "

// Report is what a worker tells the coordinator.
type Report struct {
	Index int `json:"index"`
	// Wire is the worker's k8s.WireVersion (0: a worker older than it).
	Wire         int              `json:"wire,omitempty"`
	Host         string           `json:"host,omitempty"`
	StartAt      time.Time        `json:"start_at,omitzero"`
	Late         results.Duration `json:"late"`
	ClockOffset  results.Duration `json:"clock_offset"`
	OffsetError  results.Duration `json:"clock_offset_error"`
	ClockChecked bool             `json:"clock_checked"`
	Error        string           `json:"error,omitempty"`
	Run          *results.Run     `json:"run,omitempty"`
}

// Line is the report as one log line.
func (r Report) Line() ([]byte, error) {
	b, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return append(append([]byte(ReportMarker), b...), '\n'), nil
}

// ParseReport finds the last report line in a worker's log.
func ParseReport(log []byte) (*Report, error) {
	var last []byte
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		if l := sc.Bytes(); bytes.HasPrefix(l, []byte(ReportMarker)) {
			last = append(last[:0], l[len(ReportMarker):]...)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if last == nil {
		return nil, errors.New("no result line in the worker's log")
	}
	var r Report
	if err := json.Unmarshal(last, &r); err != nil {
		return nil, fmt.Errorf("worker's result line: %v", err)
	}
	return &r, nil
}

// Sleep waits d, or until ctx is done: false then.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// ErrLate is a worker that reached the start time too late to run.
var ErrLate = errors.New("started late")

// WaitStart waits until startAt on the reference clock (local time plus
// off) and returns how late it is then. Later than maxLate (> 0) is
// ErrLate: its window would not be the others'.
func WaitStart(ctx context.Context, startAt time.Time, off time.Duration, maxLate time.Duration) (time.Duration, error) {
	if startAt.IsZero() {
		return 0, nil
	}
	local := startAt.Add(-off)
	if !Sleep(ctx, time.Until(local)) {
		return 0, ctx.Err()
	}
	late := max(0, time.Since(local))
	if maxLate > 0 && late > maxLate {
		return late, fmt.Errorf("%w: %v after the start time (the limit is %v): the pod started too late; give the coordinator more --start-lead", ErrLate, late.Round(time.Millisecond), maxLate)
	}
	return late, nil
}
