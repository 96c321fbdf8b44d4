package loadgen

import (
	"container/heap"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
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
//
// A mix on several hosts (Hosts, a protocol.HostDialer) splits the
// connections: each host gets connections in proportion to its requests'
// weights, summed (at least one; the largest remainders take the rest),
// spread over the connection indexes as a round is. A connection sends
// its host's requests only: the run's request indexes are dealt to the
// hosts as the round deals them (host h's k-th request is the run's k-th
// index whose entry is one of h's), so the schedule (the intended
// starts, -n) and the shares by name are the run's, as on one host;
// each host's connections take its indexes in turn. Goroutines drive it.
type Mix struct {
	// Weights and Names are the Dialer's requests', by their index in
	// its list. Requests of one name share their statistics.
	Weights []int
	Names   []string
	// Hosts, with a protocol.HostDialer, are the requests' hosts (its
	// indexes); nil, or all 0, for one host. A request's index for its
	// host's Dialer is its index among that host's requests.
	Hosts []int
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
	copies  int      // a slot's statistics, each shared by the shards of one index mod copies
	// Statistics are kept by slot, a name on a host (one host: a slot
	// is a name).
	slotOf   []int32 // by request
	slotName []int32 // by slot
	slotHost []int32
	stats    []nameStats
	// local is each request's index among its host's, which its host's
	// Picker takes; hosts are the hosts of a mix on several, nil on one.
	local []int32
	hosts []hostState
	// connHost deals the connections to the hosts: connection k goes to
	// connHost[k mod len].
	connHost []int32
}

// hostState is one host of a mix on several.
type hostState struct {
	next    atomic.Uint64 // its requests taken
	pos     []uint32      // the indexes of a round whose entry is its
	origin  string
	dialer  protocol.Dialer
	conns   int
	weight  int
	connect atomic.Int64 // its failed connects in the measured window, as Summary.Errors counts them
	_       [64]byte
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
func newMix(m *Mix, shards []*shard, first protocol.Conn, d protocol.Dialer, conns int) (*mixState, error) {
	switch {
	case len(m.Weights) == 0:
		return nil, errors.New("a request mix without requests")
	case len(m.Names) != len(m.Weights):
		return nil, fmt.Errorf("a request mix of %d weights and %d names", len(m.Weights), len(m.Names))
	case m.Hosts != nil && len(m.Hosts) != len(m.Weights):
		return nil, fmt.Errorf("a request mix of %d weights and %d hosts", len(m.Weights), len(m.Hosts))
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
	if err := s.setHosts(m, d, conns); err != nil {
		return nil, err
	}
	s.copies = max(1, min(len(shards), mixHists/len(s.slotName)))
	s.stats = make([]nameStats, len(s.slotName)*s.copies)
	for i := range s.stats {
		s.stats[i].latency = hist.New()
	}
	for i, sh := range shards {
		sh.index = i
	}
	return s, nil
}

// setHosts lays out the hosts of m (one without m.Hosts) and the slots
// of the statistics: a name on a host.
func (s *mixState) setHosts(m *Mix, d protocol.Dialer, conns int) error {
	nhosts := 1
	for _, h := range m.Hosts {
		if h < 0 {
			return fmt.Errorf("a request mix's host %d", h)
		}
		nhosts = max(nhosts, h+1)
	}
	hd, multi := d.(protocol.HostDialer)
	switch {
	case multi && hd.Hosts() != nhosts:
		return fmt.Errorf("a request mix on %d hosts, with a Dialer of %d", nhosts, hd.Hosts())
	case !multi && nhosts > 1:
		return fmt.Errorf("a request mix on %d hosts needs a Dialer for each (protocol.HostDialer)", nhosts)
	}
	if err := protocol.CheckHostConns(nhosts, conns); err != nil {
		return fmt.Errorf("the request mix %w", err)
	}
	hostOf := func(r int) int32 {
		if m.Hosts == nil {
			return 0
		}
		return int32(m.Hosts[r])
	}
	s.slotOf, s.local = make([]int32, len(m.Weights)), make([]int32, len(m.Weights))
	slots := map[[2]int32]int32{}
	counts := make([]int32, nhosts)
	for r := range m.Weights {
		h := hostOf(r)
		key := [2]int32{s.nameOf[r], h}
		k, ok := slots[key]
		if !ok {
			k = int32(len(s.slotName))
			slots[key] = k
			s.slotName, s.slotHost = append(s.slotName, key[0]), append(s.slotHost, h)
		}
		s.slotOf[r], s.local[r] = k, counts[h]
		counts[h]++
	}
	if !multi {
		return nil
	}
	s.hosts = make([]hostState, nhosts)
	total := 0
	for r, w := range m.Weights {
		s.hosts[hostOf(r)].weight += w
		total += w
	}
	for i, r := range s.order {
		hs := &s.hosts[hostOf(int(r))]
		hs.pos = append(hs.pos, uint32(i))
	}
	// Connections in proportion to the weights, at least one each; the
	// largest remainders take what is left.
	left := conns - nhosts
	rem := make([]int, nhosts)
	for h := range s.hosts {
		hs := &s.hosts[h]
		hs.origin, hs.dialer = hd.Origin(h), hd.Host(h)
		share := left * hs.weight
		hs.conns, rem[h] = 1+share/total, share%total
	}
	given := 0
	for h := range s.hosts {
		given += s.hosts[h].conns
	}
	byRem := make([]int, nhosts)
	for h := range byRem {
		byRem[h] = h
	}
	slices.SortStableFunc(byRem, func(a, b int) int { return rem[b] - rem[a] })
	for _, h := range byRem[:conns-given] {
		s.hosts[h].conns++
	}
	counts2 := make([]int, nhosts)
	for h := range s.hosts {
		counts2[h] = s.hosts[h].conns
	}
	deal, err := interleave(counts2)
	if err != nil {
		return err
	}
	// Connection 0 is the first host's: the goroutines keep Run's
	// preflight connection, host 0's, as their first connection.
	at := slices.Index(deal, 0)
	s.connHost = slices.Concat(deal[at:], deal[:at])
	return nil
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

// claim takes the next request of the run for a connection to host
// (0 on one host): its index i and the request of a mix it sends (-1
// without a mix).
func (e *engine) claim(host int32) (uint64, int32) {
	m := e.mix
	if m == nil || m.hosts == nil {
		i := e.next.Add(1) - 1
		return i, e.pick(i)
	}
	hs := &m.hosts[host]
	j := hs.next.Add(1) - 1
	n := uint64(len(hs.pos))
	i := j/n*uint64(len(m.order)) + uint64(hs.pos[j%n])
	return i, m.order[i%uint64(len(m.order))]
}

// host is connection k's host (0 on one host) and its Dialer.
func (e *engine) host(k int) (int32, protocol.Dialer) {
	m := e.mix
	if m == nil || m.hosts == nil {
		return 0, e.dialer
	}
	h := m.connHost[k%len(m.connHost)]
	return h, m.hosts[h].dialer
}

// connectFailed counts a failed connect to host that the run's summary
// counts as a connect error.
func (m *mixState) connectFailed(host int32) {
	if m != nil && m.hosts != nil {
		m.hosts[host].connect.Add(1)
	}
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
	st := &m.stats[int(m.slotOf[pick])*m.copies+sh.index%m.copies]
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

// result adds the figures by name to run, and by host on several, its
// window over.
func (m *mixState) result(run *results.Run) {
	sec := run.Summary.Duration.D().Seconds()
	byName := make([]results.NamedRequests, len(m.names))
	lats := make([]*hist.Histogram, len(m.names))
	for n, name := range m.names {
		byName[n].Name, byName[n].Weight = name, m.weights[n]
		lats[n] = hist.New()
	}
	var byHost []results.NamedRequests
	var hostLats []*hist.Histogram
	for h := range m.hosts {
		hs := &m.hosts[h]
		byHost = append(byHost, results.NamedRequests{Name: hs.origin, Weight: hs.weight, Connections: hs.conns})
		byHost[h].Errors.Connect = hs.connect.Load()
		hostLats = append(hostLats, hist.New())
	}
	for k := range m.slotName {
		n := m.slotName[k]
		m.add(k, &byName[n], lats[n])
		if byHost != nil {
			h := m.slotHost[k]
			m.add(k, &byHost[h], hostLats[h])
		}
	}
	run.RequestsByName = shares(byName, lats, sec)
	if byHost != nil {
		run.RequestsByHost = shares(byHost, hostLats, sec)
	}
	if m.folded > 0 {
		run.Notes = append(run.Notes, fmt.Sprintf("the request mix has more than %d names: %d of them are counted together as %s",
			MaxMixNames-1, m.folded, OtherName))
	}
}

// add adds slot k's statistics to nr, its latencies to lat.
func (m *mixState) add(k int, nr *results.NamedRequests, lat *hist.Histogram) {
	for c := range m.copies {
		st := &m.stats[k*m.copies+c]
		lat.Merge(st.latency)
		nr.Requests += st.answered
		for code, n := range st.status {
			if n > 0 {
				if nr.Status == nil {
					nr.Status = map[int]int64{}
				}
				nr.Status[code] += n
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
}

// shares completes rows: their latency and its histogram, rate over sec
// seconds, and shares of the weights and of the requests sent.
func shares(rows []results.NamedRequests, lats []*hist.Histogram, sec float64) []results.NamedRequests {
	total, weight := int64(0), 0
	for n := range rows {
		nr := &rows[n]
		nr.Latency = results.Reduce(lats[n])
		nr.Histogram, _ = lats[n].Encode() // as the run's own (reporter.go)
		total += nr.Latency.Count
		weight += nr.Weight
		if sec > 0 {
			nr.RPS = float64(nr.Requests) / sec
		}
	}
	for n := range rows {
		nr := &rows[n]
		nr.WeightShare = float64(nr.Weight) / float64(weight)
		if total > 0 {
			nr.Share = float64(nr.Latency.Count) / float64(total)
		}
	}
	return rows
}
