package sweep

import (
	"context"
	"errors"
	"sync"
)

// ErrStepAborted is the cause a halted sweep's context is canceled with.
var ErrStepAborted = errors.New("a step aborted")

// Halt stops a sweep after its first step that aborted (--abort-on-fail:
// an assertion broke while the step ran), before the next step starts.
// A nil *Halt stops nothing.
type Halt struct {
	cancel context.CancelCauseFunc
	mu     sync.Mutex
	step   string
	why    string
}

// NewHalt wraps the context a sweep runs with: its Events cancel it.
func NewHalt(ctx context.Context) (context.Context, *Halt) {
	ctx, cancel := context.WithCancelCause(ctx)
	return ctx, &Halt{cancel: cancel}
}

// Events passes the sweep's events on to next and, at a step that
// aborted, cancels the sweep's context with ErrStepAborted.
func (h *Halt) Events(next func(Event)) func(Event) {
	if h == nil {
		return next
	}
	return func(ev Event) {
		if next != nil {
			next(ev)
		}
		if ev.Kind == StepFinished && ev.Result != nil && ev.Result.Run != nil && ev.Result.Run.Aborted != "" {
			h.mu.Lock()
			if h.step == "" {
				h.step, h.why = ev.Result.ID, ev.Result.Run.Aborted
			}
			h.mu.Unlock()
			h.cancel(ErrStepAborted)
		}
	}
}

// Stopped tells whether err, a sweep's error with the context NewHalt
// made, is the sweep stopping at an aborted step, and which step and why.
func (h *Halt) Stopped(ctx context.Context, err error) (step, why string, ok bool) {
	if h == nil || !errors.Is(err, context.Canceled) || !errors.Is(context.Cause(ctx), ErrStepAborted) {
		return "", "", false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.step, h.why, true
}
