package loadgen

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"loadgen/loadgen/protocol"
	"loadgen/results"
	"loadgen/results/hist"
)

// A round sends each request as often as its weight says, spread evenly:
// every start of it is within a request or so of each one's share (the
// turns that fall together, of requests of equal weight, add a little).
func TestInterleave(t *testing.T) {
	for _, tc := range []struct {
		weights []int
		want    []int32
	}{
		{[]int{1, 2, 3}, []int32{2, 1, 0, 2, 1, 2}},
		{[]int{2, 4, 6}, []int32{2, 1, 0, 2, 1, 2}}, // over their greatest common divisor
		{[]int{5}, []int32{0}},
		{[]int{1, 1, 1}, []int32{0, 1, 2}},
		{[]int{3, 1}, []int32{0, 0, 1, 0}},
	} {
		got, err := interleave(tc.weights)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("weights %v: %v %v, want %v", tc.weights, got, err, tc.want)
		}
	}
	for _, weights := range [][]int{{1, 1000}, {7, 13, 29, 1}, {100, 1, 1, 1, 50, 3}, {999983, 1}} {
		order, err := interleave(weights)
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, w := range weights {
			total += w
		}
		if len(order) != total {
			t.Fatalf("weights %v: a round of %d", weights, len(order))
		}
		counts := make([]int, len(weights))
		for n, r := range order {
			counts[r]++
			for q, w := range weights {
				bound := 1 + float64(len(weights))*float64(w)/float64(2*total)
				if d := float64(counts[q]) - float64(n+1)*float64(w)/float64(total); d > bound || d < -bound {
					t.Fatalf("weights %v: after %d requests, request %d had %d, its share %.1f", weights, n+1, q, counts[q], float64(n+1)*float64(w)/float64(total))
				}
			}
		}
	}
	for _, bad := range []struct {
		weights []int
		want    string
	}{{[]int{1, 0}, "at least 1"}, {[]int{MaxMixRound, 1}, "add up to more than"}} {
		if _, err := interleave(bad.weights); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("weights %v: %v", bad.weights, err)
		}
	}
}

// pickConn is a Conn that takes picks, for newMix's check.
type pickConn struct{ picked int }

func (c *pickConn) Pick(i int)                                     { c.picked = i }
func (c *pickConn) Do(context.Context, time.Time) protocol.Outcome { return protocol.Outcome{} }
func (c *pickConn) Close() error                                   { return nil }

// Names are kept in the order they first appear, a name's weights
// summed; past MaxMixNames, the rest are counted as one, and the run says
// so. A name's statistics are split by shard while they fit mixHists.
func TestMixNames(t *testing.T) {
	shards := []*shard{newShard(false, false), newShard(false, false), newShard(false, false), newShard(false, false)}
	m, err := newMix(&Mix{Weights: []int{1, 2, 3, 4}, Names: []string{"a", "b", "a", "c"}}, shards, &pickConn{}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m.names, []string{"a", "b", "c"}) || !reflect.DeepEqual(m.weights, []int{4, 2, 4}) ||
		!reflect.DeepEqual(m.nameOf, []int32{0, 1, 0, 2}) || m.copies != 4 || shards[3].index != 3 {
		t.Errorf("names %v weights %v of %v, %d copies", m.names, m.weights, m.nameOf, m.copies)
	}
	var names []string
	for i := range MaxMixNames + 50 {
		names = append(names, fmt.Sprint("n", i))
	}
	m, err = newMix(&Mix{Weights: make1(len(names)), Names: names}, shards, &pickConn{}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.names) != MaxMixNames || m.names[MaxMixNames-1] != OtherName || m.folded != 51 || m.weights[MaxMixNames-1] != 51 || m.copies != 1 {
		t.Errorf("%d names, the last %q, %d folded weighing %d, %d copies", len(m.names), m.names[len(m.names)-1], m.folded, m.weights[len(m.weights)-1], m.copies)
	}
	run := &results.Run{Summary: results.Summary{Duration: results.Duration(time.Second)}}
	m.record(shards[2], 120, &protocol.Outcome{Status: 200}, time.Millisecond, false)
	m.record(shards[1], 0, &protocol.Outcome{Err: protocol.Timeout}, time.Second, true)
	m.result(run)
	other, first := run.RequestsByName[MaxMixNames-1], run.RequestsByName[0]
	if other.Name != OtherName || other.Requests != 1 || other.Status[200] != 1 || first.Errors.Timeout != 1 || first.Requests != 0 ||
		first.Latency.Count != 1 || other.Share != 0.5 || len(run.Notes) != 1 || !strings.Contains(run.Notes[0], "51 of them are counted together as (other)") {
		t.Errorf("other %+v, first %+v, notes %v", other, first, run.Notes)
	}
	// Each row keeps its latency's histogram, which loadgen merge merges.
	for _, nr := range []results.NamedRequests{first, other} {
		h, err := hist.Decode(nr.Histogram)
		if err != nil {
			t.Errorf("%s: histogram: %v", nr.Name, err)
		} else if results.Reduce(h) != nr.Latency {
			t.Errorf("%s: histogram's latency %+v, the row's %+v", nr.Name, results.Reduce(h), nr.Latency)
		}
	}
	// Exactly MaxMixNames names: none folded.
	m, err = newMix(&Mix{Weights: make1(MaxMixNames), Names: names[:MaxMixNames]}, shards, &pickConn{}, nil, 1)
	if err != nil || m.folded != 0 || m.names[MaxMixNames-1] != names[MaxMixNames-1] {
		t.Errorf("%d names: %d folded (%v)", MaxMixNames, m.folded, err)
	}
}

func make1(n int) []int {
	w := make([]int, n)
	for i := range w {
		w[i] = 1
	}
	return w
}
