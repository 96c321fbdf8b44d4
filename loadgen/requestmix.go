package loadgen

import (
	"container/heap"
	"errors"
	"fmt"
	"sync"
	"time"

	"loadgen/loadgen/protocol"
	"loadgen/results"
	"loadgen/results/hist"
)

// Mix is a run's request mix (loadgen run --targets): the Dialer holds
// the requests, built once (its Conns, Sessions and Muxes are
// protocol.Pickers); the engine picks which one each request sends and
// keeps statistics by name.
//
// Request i of the run (the index that paces it and counts it against
// -n) sends entry i mod W of one round of W requests, W the sum of the
// weights (over their greatest common divisor), in which each request
// comes as often as its weight says, spread evenly (weights 1, 2, 3:
// C B A C B C), on every driver: the shares are exact over the requests
// taken, deterministic, and a pick costs an index, never a random draw.
type Mix struct {
	// Weights and Names are the Dialer's requests', by their index in
	// its list. Requests of one name share their statistics.
	Weights []int
	Names   []string
}

// Limits of a mix: past MaxMixNames names, the rest are counted together
// as OtherName; a round holds at most MaxMixRound requests.
const (
	MaxMixNames = 100
	MaxMixRound = 1 << 20
	OtherName   = "(other)"
)

// mixHists bounds the histograms a mix's statistics keep: a name has
// one per shard (recorded under no other lock than the shards') while
// names × shards stays within it, fewer beyond (fixed memory: about
// 140 KiB a histogram).
const mixHists = 64

// mixState is a run's mix: the round, the names, and the statistics by
// name.
type mixState struct {
	order   []int32  // one round: the request each index sends
	nameOf  []int32  // by request: its name
	names   []string // in the order they first appear
	weights []int    // by name: its requests' weights, summed
	folded  int      // names counted as OtherName
	copies  int      // a name's statistics, each shared by the shards of one index mod copies
	stats   []nameStats
}

// nameStats are one name's statistics (or a part of them: mixState.copies).
type nameStats struct {
	mu       sync.Mutex
	latency  *hist.Histogram // every request sent, as Summary.Latency
	answered int64
	status   [maxStatus]int64
	errs     [protocol.NumErrClasses]int64
	_        [64]byte
}

// newMix checks m against the run and lays out its statistics. first is
// the preflight's connection: one of the Dialer's, which must take picks.
func newMix(m *Mix, shards []*shard, first protocol.Conn) (*mixState, error) {
	switch {
	case len(m.Weights) == 0:
		return nil, errors.New("a request mix without requests")
	case len(m.Names) != len(m.Weights):
		return nil, fmt.Errorf("a request mix of %d weights and %d names", len(m.Weights), len(m.Names))
	}
	if _, ok := first.(protocol.Picker); !ok {
		return nil, fmt.Errorf("this protocol's connections (%T) send one request: a request mix needs HTTP/1.1 or HTTP/2 with loadgen's clients", first)
	}
	order, err := interleave(m.Weights)
	if err != nil {
		return nil, err
	}
	s := &mixState{order: order, nameOf: make([]int32, len(m.Names))}
	distinct := map[string]bool{}
	for _, name := range m.Names {
		distinct[name] = true
	}
	keep := len(distinct)
	if keep > MaxMixNames {
		keep = MaxMixNames - 1 // and the rest share one name: fixed memory, whatever the file
	}
	index := map[string]int32{}
	other := int32(-1)
	for r, name := range m.Names {
		n, ok := index[name]
		switch {
		case ok:
		case len(s.names) < keep:
			n = int32(len(s.names))
			index[name] = n
			s.names, s.weights = append(s.names, name), append(s.weights, 0)
		default:
			if other < 0 {
				other = int32(len(s.names))
				s.names, s.weights = append(s.names, OtherName), append(s.weights, 0)
			}
			n = other
			index[name] = n
			s.folded++
		}
		s.nameOf[r] = n
		s.weights[n] += m.Weights[r]
	}
	s.copies = max(1, min(len(shards), mixHists/len(s.names)))
	s.stats = make([]nameStats, len(s.names)*s.copies)
	for i := range s.stats {
		s.stats[i].latency = hist.New()
	}
	for i, sh := range shards {
		sh.index = i
	}
	return s, nil
}

// interleave is one round of a mix: each request as many times as its
// weight (over the weights' greatest common divisor), each of its turns
// where it falls evenly over the round — the k-th of a request of weight
// w at (k+½)/w — ties to the first request.
func interleave(weights []int) ([]int32, error) {
	g := 0
	for _, w := range weights {
		if w < 1 {
			return nil, fmt.Errorf("a request mix's weights are at least 1, got %d", w)
		}
		g = gcd(g, w)
	}
	total := 0
	h := make(turns, len(weights))
	for r, w := range weights {
		total += w / g
		if total > MaxMixRound {
			return nil, fmt.Errorf("a request mix's weights add up to more than %d (over their greatest common divisor): make them smaller, only their ratios matter", MaxMixRound)
		}
		h[r] = turn{req: int32(r), w: int64(w / g)}
	}
	heap.Init(&h)
	order := make([]int32, 0, total)
	for len(order) < total {
		t := &h[0]
		order = append(order, t.req)
		if t.k++; t.k < t.w {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	return order, nil
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// turn is a request's next turn in a round: its k-th of w, at (2k+1)/2w.
type turn struct {
	req  int32
	k, w int64
}

type turns []turn

func (h turns) Len() int { return len(h) }
func (h turns) Less(i, j int) bool {
	a, b := (2*h[i].k+1)*h[j].w, (2*h[j].k+1)*h[i].w
	return a < b || a == b && h[i].req < h[j].req
}
func (h turns) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *turns) Push(x any)   { *h = append(*h, x.(turn)) }
func (h *turns) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}

// pick is the request that request i of the run sends, -1 without a mix.
func (e *engine) pick(i uint64) int32 {
	m := e.mix
	if m == nil {
		return -1
	}
	return m.order[i%uint64(len(m.order))]
}

// record adds a request of the measured window, which sent request pick,
// to its name's statistics: latency as Summary.Latency counts it, failed
// as the shard counted it.
func (m *mixState) record(sh *shard, pick int32, o *protocol.Outcome, latency time.Duration, failed bool) {
	st := &m.stats[int(m.nameOf[pick])*m.copies+sh.index%m.copies]
	code := o.Status
	if code < 0 || code >= maxStatus {
		code = 0
	}
	st.mu.Lock()
	st.latency.Record(latency)
	if failed {
		st.errs[o.Err]++
	} else {
		st.answered++
		st.status[code]++
		st.errs[o.Err]++ // None, or Status
	}
	st.mu.Unlock()
}

// result adds the figures by name to run, its window over.
func (m *mixState) result(run *results.Run) {
	total, weight := int64(0), 0
	byName := make([]results.NamedRequests, len(m.names))
	for n, name := range m.names {
		lat := hist.New()
		nr := &byName[n]
		nr.Name, nr.Weight = name, m.weights[n]
		weight += nr.Weight
		for c := range m.copies {
			st := &m.stats[n*m.copies+c]
			lat.Merge(st.latency)
			nr.Requests += st.answered
			for code, k := range st.status {
				if k > 0 {
					if nr.Status == nil {
						nr.Status = map[int]int64{}
					}
					nr.Status[code] += k
				}
			}
			e := &nr.Errors
			e.Connect += st.errs[protocol.Connect]
			e.Read += st.errs[protocol.Read]
			e.Write += st.errs[protocol.Write]
			e.Timeout += st.errs[protocol.Timeout]
			e.Status += st.errs[protocol.Status]
			e.Protocol += st.errs[protocol.Protocol]
		}
		nr.Latency = results.Reduce(lat)
		total += nr.Latency.Count
		if sec := run.Summary.Duration.D().Seconds(); sec > 0 {
			nr.RPS = float64(nr.Requests) / sec
		}
	}
	for n := range byName {
		nr := &byName[n]
		nr.WeightShare = float64(nr.Weight) / float64(weight)
		if total > 0 {
			nr.Share = float64(nr.Latency.Count) / float64(total)
		}
	}
	run.RequestsByName = byName
	if m.folded > 0 {
		run.Notes = append(run.Notes, fmt.Sprintf("the request mix has more than %d names: %d of them are counted together as %s",
			MaxMixNames-1, m.folded, OtherName))
	}
}
