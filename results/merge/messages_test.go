package merge

import (
	"math/rand/v2"
	"testing"
	"time"

	"loadgen/results"
	"loadgen/results/hist"
)

// Streamed answers' messages merge exactly: counts add, rates add over
// each worker's own window, and the first-message and gap distributions
// are the union's.
func TestMergeMessages(t *testing.T) {
	in, _, _ := workerRuns(t, 3, 11)
	rng := rand.New(rand.NewPCG(5, 9))
	first, gap := hist.New(), hist.New()
	var count int64
	var perSec float64
	for w, x := range in {
		f, g := hist.New(), hist.New()
		n := int64(100 + 50*w)
		for range n {
			d := time.Duration(50+rng.IntN(5000)) * time.Microsecond
			f.Record(d)
			first.Record(d)
			for range 4 {
				d := time.Duration(1+rng.IntN(200)) * time.Microsecond
				g.Record(d)
				gap.Record(d)
			}
		}
		m := &results.Messages{Count: 5 * n, First: results.Reduce(f)}
		gl := results.Reduce(g)
		m.Gap = &gl
		win := x.Run.End.Sub(x.Run.Start)
		m.PerSec = float64(m.Count) / win.Seconds()
		x.Run.Summary.Messages = m
		x.Run.Histograms.MessageFirst, x.Run.Histograms.MessageGap = encode(t, f), encode(t, g)
		count += m.Count
		perSec += float64(m.Count) / ownWindow(x.Run).Seconds()
	}
	out, _, err := Runs(in)
	if err != nil {
		t.Fatal(err)
	}
	m := out.Summary.Messages
	if m == nil {
		t.Fatal("the merged run has no messages")
	}
	if m.Count != count || m.PerSec != perSec {
		t.Errorf("merged %d messages at %v/s, want %d at %v/s", m.Count, m.PerSec, count, perSec)
	}
	if want := results.Reduce(first); m.First != want {
		t.Errorf("first message:\n got %+v\nwant %+v", m.First, want)
	}
	if want := results.Reduce(gap); m.Gap == nil || *m.Gap != want {
		t.Errorf("gap:\n got %+v\nwant %+v", m.Gap, want)
	}
	if out.Histograms.MessageFirst == "" || out.Histograms.MessageGap == "" {
		t.Error("the merged run does not keep the message histograms")
	}
}
