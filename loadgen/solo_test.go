package loadgen_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"loadgen/internal/race"
	"loadgen/internal/ratecheck"
	"loadgen/loadgen"
	"loadgen/results"
)

// One connection, closed loop: on the event loop that keeps its P, the
// connection's answers are read blocking (a solo connection), which the
// tests below hold to the rules every driver keeps: every request counts,
// an answer slower than the blocking read's slice (5 ms) is still read
// and timed from its send, a timeout is a hard bound and replaces the
// connection, and Ctrl-C ends the run at once with what was in flight
// discarded.

func TestOneConnectionSlowAnswersCount(t *testing.T) {
	forDrivers(t, func(t *testing.T) {
		const every, slow = 25, 20 * time.Millisecond
		srv := newServer(t, func(n int64) time.Duration {
			if n%every == 0 {
				return slow
			}
			return 0
		})
		probe := ratecheck.StartProbe()
		r := run(t, conf(1, 700*time.Millisecond), srv.URL)
		stalled := probe.Stop()
		s := r.Summary
		if s.Requests < every || s.Requests != srv.served.Load() || s.Errors.Total() != 0 {
			t.Fatalf("%d requests counted, %d served, errors %+v", s.Requests, srv.served.Load(), s.Errors)
		}
		// Each slow answer is one latency of at least its delay, timed
		// from its send: not from a later wait, not lost.
		slowOnes := s.Requests / every
		atLeast := float64(s.Requests) * (1 - quantileOf(t, r, slow-time.Millisecond))
		if int64(atLeast+0.5) < slowOnes || int64(atLeast+0.5) > slowOnes+slowOnes/2+3 {
			t.Errorf("%.0f latencies of ≥ %v, want the %d slow answers", atLeast, slow, slowOnes)
		}
		// A busy machine that held this process (the probe's independent
		// figure) delays one answer's read by as much: not the engine's.
		if mx := s.Latency.Max.D(); mx < slow || mx > slow+200*time.Millisecond+stalled {
			t.Errorf("max latency %v, want about %v (the machine stalled this process %v)", mx, slow, stalled)
		}
	})
}

func TestOneConnectionTimeout(t *testing.T) {
	forDriversPlain(t, func(t *testing.T) {
		const stallAt = 10
		srv := newServer(t, func(n int64) time.Duration {
			if n == stallAt {
				return 2 * time.Second
			}
			return 0
		})
		// Under -race on a busy machine an ordinary answer can take tens
		// of milliseconds: a longer timeout keeps the stalled request the
		// only one past it.
		timeout, window, slack := 100*time.Millisecond, 600*time.Millisecond, 10*time.Millisecond
		if race.Enabled {
			timeout, window, slack = 400*time.Millisecond, 1200*time.Millisecond, 50*time.Millisecond
		}
		cfg := conf(1, window)
		cfg.Timeout = results.Duration(timeout)
		probe := ratecheck.StartProbe()
		r := run(t, cfg, srv.URL)
		stalled := probe.Stop()
		s := r.Summary
		// An ordinary answer comes in well under half the timeout: one
		// more timeout needs the machine to have held this process for
		// at least that long (the probe's independent figure), one request
		// at a time on the one connection.
		extra := int64(stalled / (timeout / 2))
		if s.Errors.Timeout < 1 || s.Errors.Timeout > 1+extra || s.Errors.Total() != s.Errors.Timeout {
			t.Fatalf("errors %+v, want the one stalled request's timeout (and at most %d more: the machine stalled this process %v)", s.Errors, extra, stalled)
		}
		if s.Requests < 2*stallAt {
			t.Errorf("%d answered: the run must go on after the timeout", s.Requests)
		}
		// Counted at its timeout, not when the loop next looked.
		if s.Failed == nil {
			t.Fatal("no failed request's latency")
		}
		if mx := s.Failed.Max.D(); mx < timeout || mx > timeout+slack+stalled {
			t.Errorf("the timed-out request's latency %v, want its %v timeout (the machine stalled this process %v)", mx, timeout, stalled)
		}
		// HTTP/1.1: the timed-out connection's state is unknown: replaced.
		if !h2c && s.Connections.Established < 2 {
			t.Errorf("%d connections established: the timed-out one must be replaced", s.Connections.Established)
		}
	})
}

// Ctrl-C comes once the server holds the sixth request (not at a time,
// which a busy machine could reach before it was sent).
func TestOneConnectionInterrupt(t *testing.T) {
	forVariants(t, false, false, func(t *testing.T) {
		hold := make(chan struct{})
		defer close(hold)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		var served, cancelled atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n := served.Add(1); n > 5 {
				if n == 6 {
					cancelled.Store(time.Now().UnixNano())
					cancel()
				}
				select {
				case <-hold:
				case <-r.Context().Done():
				}
			}
		}))
		defer srv.Close()
		defer time.AfterFunc(10*time.Second, cancel).Stop() // a bound on a broken run, not a timing assertion
		cfg := conf(1, 5*time.Second)
		cfg.Threads, cfg.Target = 1, srv.URL
		cfg.Timeout = results.Duration(4 * time.Second)
		r, err := loadgen.Run(ctx, cfg, dialer(t, srv.URL))
		if err != nil {
			t.Fatal(err)
		}
		if at := cancelled.Load(); at == 0 {
			t.Error("the server never held a sixth request")
		} else if took := time.Since(time.Unix(0, at)); took > 2*time.Second {
			t.Errorf("the run returned %v after Ctrl-C", took)
		}
		if !r.Interrupted || r.Summary.InFlight != 1 || r.Summary.Requests != 5 {
			t.Errorf("interrupted %v, %d in flight discarded, %d answered; want 1 discarded, 5 answered",
				r.Interrupted, r.Summary.InFlight, r.Summary.Requests)
		}
	})
}
