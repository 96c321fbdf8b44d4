package merge

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"loadgen/results"
	"loadgen/results/hist"
)

// mixNames are the names of a mix, their weights and hosts.
var mixNames = []struct {
	name   string
	weight int
	host   int
}{{"search", 1, 0}, {"POST /post", 2, 0}, {"bytes", 3, 1}}

var mixHosts = []string{"http://a:8080", "http://b:8080"}

// mixRuns gives workerRuns' runs figures by name and by host, as the
// engine fills them (requestmix.go): each worker's random latencies per
// name recorded into its rows' histograms and into the union's, some
// failed, some failed connects per host.
func mixRuns(t *testing.T, n int, seed uint64) (in []Input, union map[string]*hist.Histogram) {
	in, _, _ = workerRuns(t, n, seed)
	rng := rand.New(rand.NewPCG(seed, 11))
	union = map[string]*hist.Histogram{}
	for w, x := range in {
		byName := make([]results.NamedRequests, len(mixNames))
		byHost := make([]results.NamedRequests, len(mixHosts))
		names, hosts := make([]*hist.Histogram, len(byName)), make([]*hist.Histogram, len(byHost))
		for h := range byHost {
			byHost[h] = results.NamedRequests{Name: mixHosts[h], Connections: 2 + h + w,
				Errors: results.Errors{Connect: int64(w + h)}}
			hosts[h] = hist.New()
		}
		for k, m := range mixNames {
			byName[k] = results.NamedRequests{Name: m.name, Weight: m.weight}
			byHost[m.host].Weight += m.weight
			names[k] = hist.New()
		}
		for range 1000 + rng.IntN(2000) {
			k := rng.IntN(len(mixNames))
			h := mixNames[k].host
			d := time.Duration(float64(100*time.Microsecond) * (1 + rng.ExpFloat64()*float64(k+w+1)))
			for _, rec := range []struct {
				row *results.NamedRequests
				h   *hist.Histogram
				key string
			}{{&byName[k], names[k], mixNames[k].name}, {&byHost[h], hosts[h], mixHosts[h]}} {
				rec.h.Record(d)
				if union[rec.key] == nil {
					union[rec.key] = hist.New()
				}
				union[rec.key].Record(d)
				switch rng.IntN(40) {
				case 0:
					rec.row.Errors.Timeout++
				case 1:
					rec.row.Requests++
					rec.row.Errors.Status++
					rec.row.Status = inc(rec.row.Status, 503)
				default:
					rec.row.Requests++
					rec.row.Status = inc(rec.row.Status, 200)
				}
			}
		}
		sec := x.Run.End.Sub(x.Run.Start).Seconds()
		for _, rows := range []struct {
			rows []results.NamedRequests
			hs   []*hist.Histogram
		}{{byName, names}, {byHost, hosts}} {
			for k := range rows.rows {
				r := &rows.rows[k]
				r.Latency, r.Histogram, r.RPS = results.Reduce(rows.hs[k]), encode(t, rows.hs[k]), float64(r.Requests)/sec
			}
		}
		x.Run.RequestsByName, x.Run.RequestsByHost = byName, byHost
	}
	return in, union
}

func inc(m map[int]int64, code int) map[int]int64 {
	if m == nil {
		m = map[int]int64{}
	}
	m[code]++
	return m
}

// TestMergeByName checks that the figures by name and by host merge as the
// run's own: counts, statuses, errors (failed connects by host) and
// connections added, rates the sum of each run's over its own window, the
// latency exactly that of one histogram holding every run's values, in
// the order the names first appear.
func TestMergeByName(t *testing.T) {
	for _, tc := range []struct {
		name     string
		n        int
		reorder  bool // the second run lists its names in another order
		wantName []string
	}{
		{"one run", 1, false, []string{"search", "POST /post", "bytes"}},
		{"two runs", 2, false, []string{"search", "POST /post", "bytes"}},
		{"three runs", 3, false, []string{"search", "POST /post", "bytes"}},
		{"names in another order", 2, true, []string{"search", "POST /post", "bytes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, union := mixRuns(t, tc.n, uint64(tc.n))
			if tc.reorder {
				slices.Reverse(in[1].Run.RequestsByName)
			}
			got, _, err := Runs(in)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, nr := range got.RequestsByName {
				names = append(names, nr.Name)
			}
			if !slices.Equal(names, tc.wantName) {
				t.Fatalf("names %q, want %q", names, tc.wantName)
			}
			var hosts []string
			for _, nr := range got.RequestsByHost {
				hosts = append(hosts, nr.Name)
			}
			if !slices.Equal(hosts, mixHosts) {
				t.Fatalf("hosts %q, want %q", hosts, mixHosts)
			}
			for _, tb := range []struct {
				what string
				rows func(*results.Run) []results.NamedRequests
			}{{"name", byName.rows}, {"host", byHost.rows}} {
				merged := tb.rows(got)
				var sentAll int64
				weightAll := 0
				for _, x := range in {
					for _, r := range tb.rows(x.Run) {
						sentAll += r.Latency.Count
					}
				}
				for _, nr := range merged {
					weightAll += nr.Weight
				}
				for _, nr := range merged {
					var want results.NamedRequests
					want.Status = map[int]int64{}
					var rps float64
					for _, x := range in {
						i := slices.IndexFunc(tb.rows(x.Run), func(r results.NamedRequests) bool { return r.Name == nr.Name })
						r := tb.rows(x.Run)[i]
						want.Weight = r.Weight
						want.Requests += r.Requests
						want.Connections += r.Connections
						addErrors(&want.Errors, r.Errors)
						for code, c := range r.Status {
							want.Status[code] += c
						}
						rps += float64(r.Requests) / x.Run.End.Sub(x.Run.Start).Seconds()
					}
					u := union[nr.Name]
					if nr.Requests != want.Requests || nr.Connections != want.Connections || nr.Errors != want.Errors ||
						!reflect.DeepEqual(nr.Status, want.Status) || nr.Weight != want.Weight {
						t.Errorf("by %s %s: requests %d connections %d errors %+v status %v weight %d,\nwant %d, %d, %+v, %v, %d",
							tb.what, nr.Name, nr.Requests, nr.Connections, nr.Errors, nr.Status, nr.Weight,
							want.Requests, want.Connections, want.Errors, want.Status, want.Weight)
					}
					if tb.what == "host" && (nr.Errors.Connect == 0 && tc.n > 1 || nr.Connections == 0) {
						t.Errorf("by host %s: no failed connects or connections to check: %+v", nr.Name, nr)
					}
					if !near(nr.RPS, rps) {
						t.Errorf("by %s %s: rps %v, want the runs' own rates summed %v", tb.what, nr.Name, nr.RPS, rps)
					}
					if nr.Latency != results.Reduce(u) {
						t.Errorf("by %s %s: latency\n got %+v\nwant %+v (one histogram of every run's values)", tb.what, nr.Name, nr.Latency, results.Reduce(u))
					}
					h, err := hist.Decode(nr.Histogram)
					if err != nil || !reflect.DeepEqual(h.Buckets(), u.Buckets()) {
						t.Errorf("by %s %s: the merged histogram is not the union's (%v)", tb.what, nr.Name, err)
					}
					if !near(nr.Share, float64(u.Count())/float64(sentAll)) || !near(nr.WeightShare, float64(nr.Weight)/float64(weightAll)) {
						t.Errorf("by %s %s: share %v weight share %v", tb.what, nr.Name, nr.Share, nr.WeightShare)
					}
				}
			}
		})
	}
}

// Runs of different request mixes are refused, naming both files and
// what differs: a name or a host that one run has and another has not,
// another weight, a run without figures by name, another targets file.
func TestMergeRefusesOtherMixes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*results.Run)
		msg    string
	}{
		{"a name more", func(r *results.Run) {
			r.RequestsByName = append(r.RequestsByName, results.NamedRequests{Name: "extra", Weight: 1})
		}, `name "extra" in w1 only`},
		{"a name less", func(r *results.Run) { r.RequestsByName = r.RequestsByName[1:] }, `name "search" in w0 only`},
		{"another weight", func(r *results.Run) { r.RequestsByName[1].Weight = 5 }, `name "POST /post" of weight 2 vs 5`},
		{"no figures by name", func(r *results.Run) { r.RequestsByName = nil }, "w1 has no figures by name"},
		{"another host", func(r *results.Run) { r.RequestsByHost[1].Name = "http://c:8080" }, `host "http://b:8080" in w0 only`},
		{"another targets file", func(r *results.Run) { r.Config.Targets = "other.txt" }, "targets mix.txt vs other.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in, _ := mixRuns(t, 2, 5)
			in[0].Source, in[1].Source = "w0", "w1"
			for _, x := range in {
				x.Run.Config.Targets = "mix.txt"
			}
			tc.change(in[1].Run)
			_, _, err := Runs(in)
			if err == nil {
				t.Fatal("merged runs of different mixes")
			}
			if m := err.Error(); !strings.Contains(m, tc.msg) || !strings.Contains(m, "w0 and w1") || strings.Contains(m, "\n") {
				t.Errorf("error %q, want one line naming w0 and w1 and saying %q", m, tc.msg)
			}
		})
	}
}

// A run recorded before the rows kept their histogram merges its counts
// by name, but the latency by name cannot be merged exactly: it is left
// out (zero, "—" in the reports), and a note says why.
func TestMergeByNameWithoutHistograms(t *testing.T) {
	in, _ := mixRuns(t, 2, 7)
	for k := range in[1].Run.RequestsByName {
		in[1].Run.RequestsByName[k].Histogram = ""
	}
	got, _, err := Runs(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.RequestsByName) != len(mixNames) || len(got.RequestsByHost) != len(mixHosts) {
		t.Fatalf("%d names, %d hosts merged, want %d and %d", len(got.RequestsByName), len(got.RequestsByHost), len(mixNames), len(mixHosts))
	}
	for k, nr := range got.RequestsByName {
		if want := in[0].Run.RequestsByName[k].Requests + in[1].Run.RequestsByName[k].Requests; nr.Requests != want {
			t.Errorf("%s: %d requests, want %d", nr.Name, nr.Requests, want)
		}
		if nr.Latency != (results.Latency{}) || nr.Histogram != "" || nr.Share == 0 {
			t.Errorf("%s: latency %+v, share %v: want the latency left out, the share kept", nr.Name, nr.Latency, nr.Share)
		}
	}
	if got.RequestsByHost[0].Latency.Count == 0 {
		t.Error("the hosts' latency, whose histograms every run kept, was left out too")
	}
	if !slices.ContainsFunc(got.Notes, func(n string) bool {
		return strings.Contains(n, "latency by name left out: "+in[1].Source+" has no histograms by name")
	}) {
		t.Errorf("no note of the latency left out: %q", got.Notes)
	}
}

// A broken histogram by name is bad input, named where it is.
func TestDecodeChecksHistogramsByName(t *testing.T) {
	in, _ := mixRuns(t, 1, 4)
	in[0].Run.RequestsByHost[1].Histogram = "HISTFAAAAnot-base64"
	b, _ := json.Marshal(in[0].Run)
	if _, err := Decode("w0.json", b); err == nil || !strings.Contains(err.Error(), `w0.json: requests_by_host "http://b:8080": histogram`) {
		t.Errorf("a broken histogram by host: %v", err)
	}
}
