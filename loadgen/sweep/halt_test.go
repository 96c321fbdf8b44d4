package sweep

import (
	"context"
	"testing"

	"loadgen/results"
)

// A sweep halts at its first step that aborted, and says which; a step
// that did not abort, or a Ctrl-C, is not a halt.
func TestHalt(t *testing.T) {
	finished := func(id, aborted string) Event {
		return Event{Kind: StepFinished, Result: &results.Step{ID: id, Run: &results.Run{Aborted: aborted}}}
	}
	parent, interrupt := context.WithCancel(context.Background())
	defer interrupt()
	ctx, h := NewHalt(parent)
	var seen int
	ev := h.Events(func(Event) { seen++ })
	ev(Event{Kind: StepStarted})
	ev(finished("a", ""))
	ev(Event{Kind: StepFinished, Result: &results.Step{ID: "b", Failed: "refused"}})
	if ctx.Err() != nil || seen != 3 {
		t.Fatalf("after steps that did not abort: context %v, %d events passed on; want alive, 3", ctx.Err(), seen)
	}
	if _, _, ok := h.Stopped(ctx, nil); ok {
		t.Error("Stopped before any abort")
	}
	ev(finished("c", "p99<1ms broke"))
	ev(finished("d", "errors<1% broke"))
	if ctx.Err() == nil || seen != 5 {
		t.Fatalf("after an aborted step: context %v, %d events; want canceled, 5", ctx.Err(), seen)
	}
	if step, why, ok := h.Stopped(ctx, ctx.Err()); !ok || step != "c" || why != "p99<1ms broke" {
		t.Errorf("Stopped = %q, %q, %v; want the first aborted step, c", step, why, ok)
	}

	// Interrupted, not halted.
	ctx, h = NewHalt(parent)
	interrupt()
	if _, _, ok := h.Stopped(ctx, ctx.Err()); ok {
		t.Error("a canceled parent counted as a halt")
	}

	// No halt: events pass through, nothing stops.
	var none *Halt
	n := 0
	none.Events(func(Event) { n++ })(finished("e", "broke"))
	if _, _, ok := none.Stopped(ctx, context.Canceled); n != 1 || ok {
		t.Errorf("nil Halt: %d events passed, stopped %v", n, ok)
	}
}
