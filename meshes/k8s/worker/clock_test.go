package worker

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// shiftedClock serves a Date header from a clock skew ahead of this one,
// as an API server on another machine would.
func shiftedClock(t *testing.T, skew time.Duration) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Date", time.Now().Add(skew).UTC().Format(http.TimeFormat))
		_, _ = w.Write([]byte(`{"major":"1"}`))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/version"
}

func TestMeasureOffsetFindsTheSkew(t *testing.T) {
	for _, skew := range []time.Duration{0, 3700 * time.Millisecond, -1250 * time.Millisecond} {
		off, err := MeasureOffset(context.Background(), http.DefaultClient, shiftedClock(t, skew))
		if err != nil {
			t.Fatal(err)
		}
		// The estimate is within its stated error of the truth (plus the
		// time between reading the clock and formatting the header).
		if d := (off.Offset - skew).Abs(); d > off.Error+5*time.Millisecond {
			t.Errorf("skew %v: measured %v ± %v (%d probes)", skew, off.Offset, off.Error, off.Probes)
		}
		if off.Error <= 0 || off.Error > time.Second {
			t.Errorf("skew %v: error bound %v", skew, off.Error)
		}
	}
}

func TestMeasureOffsetNeedsADate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = nil // net/http adds none then
	}))
	defer srv.Close()
	if _, err := MeasureOffset(context.Background(), http.DefaultClient, srv.URL); err == nil {
		t.Error("a reference without a Date header gave an offset")
	}
}

func TestWaitStartAndLateness(t *testing.T) {
	ctx := context.Background()
	// On time: waits until the instant, late by (almost) nothing.
	at := time.Now().Add(150 * time.Millisecond)
	late, err := WaitStart(ctx, at, 0, time.Second)
	if err != nil || time.Now().Before(at) {
		t.Fatalf("on time: late %v err %v", late, err)
	}
	// The instant is on the reference clock: a local clock 2 s behind it
	// (offset +2 s) reaches it 2 s earlier by its own reading.
	at = time.Now().Add(2*time.Second + 100*time.Millisecond)
	t0 := time.Now()
	if _, err := WaitStart(ctx, at, 2*time.Second, time.Second); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(t0); waited > time.Second {
		t.Errorf("waited %v: the offset was not applied", waited)
	}
	// Past the limit: refused, with how late.
	late, err = WaitStart(ctx, time.Now().Add(-3*time.Second), 0, time.Second)
	if err == nil || late < 3*time.Second {
		t.Errorf("3 s late: late %v err %v, want ErrLate", late, err)
	}
	// Within the limit: runs, lateness recorded.
	late, err = WaitStart(ctx, time.Now().Add(-200*time.Millisecond), 0, time.Second)
	if err != nil || late < 200*time.Millisecond {
		t.Errorf("200 ms late: late %v err %v", late, err)
	}
}

func TestShareOf(t *testing.T) {
	var c, th int
	var r float64
	for i := range 3 {
		s, err := ShareOf(10, 4, 900, 3, i)
		if err != nil {
			t.Fatal(err)
		}
		c += s.Connections
		th += s.Threads
		r += s.Rate
		if s.Threads > s.Connections || s.Threads < 1 {
			t.Errorf("worker %d: %+v", i, s)
		}
	}
	if c != 10 || th != 4 || r != 900 {
		t.Errorf("shares add up to c%d t%d R%v, want c10 t4 R900", c, th, r)
	}
	if _, err := ShareOf(2, 2, 0, 3, 0); err == nil {
		t.Error("2 connections over 3 workers accepted")
	}
}

func TestReportLine(t *testing.T) {
	r := Report{Index: 2, Late: 5, Error: "x"}
	line, err := r.Line()
	if err != nil {
		t.Fatal(err)
	}
	log := append([]byte("some output\nloadgen: x\n"), line...)
	got, err := ParseReport(log)
	if err != nil || got.Index != 2 || got.Error != "x" {
		t.Fatalf("%+v %v", got, err)
	}
	if _, err := ParseReport([]byte("no report here\n")); err == nil {
		t.Error("a log without a report line parsed")
	}
}
