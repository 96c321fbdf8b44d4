package e2e

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"loadgen/meshes/k8s"
	"loadgen/results"
	"loadgen/results/report"
)

// The node tests' judgments (crossings, costs, the table's figures) fed
// what the node would say, without a node: each fails where the node's
// run would be wrong.

// fakeNode is what an observer would have seen of a run's pods.
type fakeNode struct {
	o  *observer
	t0 time.Time
}

func newFakeNode() *fakeNode {
	return &fakeNode{t0: time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC), o: &observer{cpu: map[containerKey][]cgSample{},
		requests: map[string][]counterSample{}, reads: map[string]int64{}, pods: map[string]podInfo{}, readErrs: map[string]string{},
		finished: map[containerKey]time.Time{}}}
}

// at is t0 plus s seconds.
func (f *fakeNode) at(s float64) time.Time { return f.t0.Add(time.Duration(s * float64(time.Second))) }

// pod adds a pod: the target's, or a worker of step (its index).
func (f *fakeNode) pod(name string, target bool, step string, containers ...string) {
	labels := map[string]string{}
	if target {
		labels[k8s.LabelName] = k8s.TargetName
	}
	f.o.pods[name] = podInfo{name: name, labels: labels, target: target, step: step}
	for _, c := range containers {
		f.o.cpu[containerKey{name, c}] = []cgSample{{at: f.at(0)}, {at: f.at(100)}}
	}
}

// count adds a reading of a pod's proxy counter: n at s seconds.
func (f *fakeNode) count(pod string, s float64, n int64) {
	f.o.requests[pod] = append(f.o.requests[pod], counterSample{f.at(s), n})
}

// step is a 3 s step of reqs requests from start s, its timeline three
// 1 s intervals.
func (f *fakeNode) step(id string, index int, baseline bool, s float64, reqs int64) *results.Step {
	start := f.at(s)
	run := &results.Run{Start: start, End: start.Add(3 * time.Second), Summary: results.Summary{Requests: reqs, RPS: float64(reqs) / 3}}
	for i := range 3 {
		run.Timeline = append(run.Timeline, results.Interval{Start: results.Duration(time.Duration(i) * time.Second),
			Duration: results.Duration(time.Second), Requests: reqs / 3})
	}
	return &results.Step{ID: id, Index: index, Baseline: baseline, Run: run}
}

// TestCrossingsJudge runs the crossing check of a run in each mode, from the
// counters its proxies would show: right, and wrong in each way the
// check is there for.
func TestCrossingsJudge(t *testing.T) {
	const reqs = 3000
	sc := k8s.ContainerSidecar
	// run is a --mesh sidecar run: the direct step from 10 s, the mesh's
	// from 30 s; the target's proxy counts mesh, the mesh step's worker's
	// client, its last reading at read.
	run := func(server, client bool, mesh, clientN int64, read float64) *sidecarRun {
		f := newFakeNode()
		steps := []*results.Step{f.step("direct", 0, true, 10, reqs), f.step("mesh", 1, false, 30, reqs)}
		if server {
			f.pod("target", true, "", "httpbin", sc)
			f.count("target", 5, 0)
			f.count("target", 20, 0)
			f.count("target", 40, mesh)
		} else {
			f.pod("target", true, "", "httpbin")
		}
		if client {
			f.pod("w0", false, "0", "worker", sc)
			f.count("w0", 14, 0)
			f.pod("w1", false, "1", "worker", sc)
			f.count("w1", 25, 0)
			f.count("w1", read, clientN)
		} else {
			f.pod("w0", false, "0", "worker")
			f.pod("w1", false, "1", "worker")
		}
		name := map[[2]bool]string{{true, true}: "both", {true, false}: "serveronly", {false, true}: "clientonly", {false, false}: "none"}[[2]bool{server, client}]
		return &sidecarRun{c: sidecarCase{name: "haproxy-" + name, container: sc, counter: k8s.ProxyHAProxy, server: server, client: client},
			steps: steps, obs: f.o}
	}
	end := 33.2 // read after the mesh step's end
	for _, c := range []struct {
		name string
		r    *sidecarRun
		want string // in an error; "" none
	}{
		{"both", run(true, true, reqs, reqs+40, end), ""},
		{"serveronly", run(true, false, reqs, 0, 0), ""},
		{"clientonly", run(false, true, 0, reqs, end), ""},
		{"none", run(false, false, 0, 0, 0), ""},
		// The client proxies saw part of the step: a non-zero count is
		// not enough.
		{"client short", run(true, true, reqs, reqs/2, end), "client proxies counted 1500 requests, want at least 3000"},
		{"clientonly short", run(false, true, 0, 1, end), "client proxies counted 1 requests, want at least 3000"},
		// Last read 1.7 s into the step: the first interval's requests at
		// least (it ended by 1.5 s on any worker's clock).
		{"read early", run(true, true, reqs, reqs/3, 31.7), ""},
		{"read early short", run(true, true, reqs, reqs/3-1, 31.7), "want at least 1000"},
		{"server short", run(true, true, reqs-1, reqs, end), "server proxy counted 2999 requests of the step's 3000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			errs := c.r.crossings()
			switch {
			case c.want == "" && len(errs) > 0:
				t.Errorf("errors %q, want none", errs)
			case c.want != "" && !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, c.want) }):
				t.Errorf("errors %q, want one saying %q", errs, c.want)
			}
		})
	}

	// --mode none: a proxy container where the mode places none is wrong
	// even when its counter was never read.
	r := run(false, false, 0, 0, 0)
	r.obs.cpu[containerKey{"target", sc}] = []cgSample{{at: time.Now()}}
	r.obs.readErrs["target"] = "connection refused"
	if errs := r.crossings(); !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, "pod target has a "+sc+" container") }) {
		t.Errorf("a proxy container in mode none: errors %q", errs)
	}
	r = run(true, false, reqs, 0, 0)
	r.obs.cpu[containerKey{"w1", sc}] = []cgSample{{at: time.Now()}}
	if errs := r.crossings(); !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, "pod w1 has a "+sc+" container") }) {
		t.Errorf("a worker's proxy container in serveronly: errors %q", errs)
	}
	// The direct step crossing the server's proxy (the exclusion broken).
	r = run(true, false, reqs, 0, 0)
	r.obs.requests["target"][1].n = 7
	r.obs.requests["target"][2].n += 7
	if errs := r.crossings(); !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, "(direct): the server proxy counted 7") }) {
		t.Errorf("the baseline through the server's proxy: errors %q", errs)
	}
}

// sidecarCostRun is a one-step cost run of mode (both, serveronly, clientonly)
// whose containers used, in cores: the target's app 0.30, its sidecar
// 0.20, the worker's sidecar 0.25, the node 1.20; its figures are
// watched.
func sidecarCostRun(mode string, watched ...results.ProcessCost) *sidecarRun {
	f := newFakeNode()
	sc := k8s.ContainerSidecar
	server, client := mode != "clientonly", mode != "serveronly"
	// A container's cgroup sampled every second from 0 to 100 s.
	use := func(k containerKey, cores float64) {
		for s := 0; s <= 100; s++ {
			f.o.cpu[k] = append(f.o.cpu[k], cgSample{at: f.at(float64(s)), usage: cores * float64(s)})
		}
	}
	f.pod("target", true, "")
	for i, c := range k8s.TargetContainers() {
		use(containerKey{"target", c}, map[bool]float64{true: 0.30}[i == 0])
	}
	f.pod("w0", false, "0")
	use(containerKey{"w0", "worker"}, 0.50)
	if server {
		use(containerKey{"target", sc}, 0.20)
	}
	if client {
		use(containerKey{"w0", sc}, 0.25)
	}
	use(nodeKey, 1.20)
	st := f.step("mesh", 0, false, 20, 60000)
	st.Run.End = f.at(80) // a cost step: 60 s
	st.Watched = append(watched, results.ProcessCost{Name: "node", Role: "node", Samples: 4, CPUMean: 1.20})
	return &sidecarRun{c: sidecarCase{name: "haproxy-" + mode, container: sc, server: server, client: client, source: "metrics.k8s.io"},
		steps: []*results.Step{st}, obs: f.o}
}

// TestCostsJudge checks that the cost check passes the figures each
// container's cgroup gives, and fails the old cost code's: the server's
// sidecar in the target's figure too, one proxy figure for both sides beside
// the sides' own, and a one-sided mode's figure missing or "not measurable".
func TestCostsJudge(t *testing.T) {
	fig := func(name, role, side string, cores float64) results.ProcessCost {
		return results.ProcessCost{Name: name, Role: role, Side: side, Samples: 4, Processes: 1, CPUMean: cores}
	}
	none := func(name, side string) results.ProcessCost {
		return results.ProcessCost{Name: name, Role: "proxy", Side: side, NoProxy: "no proxy in this mode"}
	}
	target := fig("target", "target", "", 0.30)
	server := fig("server-proxy", "proxy", "server", 0.20)
	client := fig("client-proxy", "proxy", "client", 0.25)
	for _, c := range []struct {
		name string
		r    *sidecarRun
		want string // in an error; "" none
	}{
		{"both", sidecarCostRun("both", target, server, client), ""},
		{"serveronly", sidecarCostRun("serveronly", target, server, none("client-proxy", "client")), ""},
		{"clientonly", sidecarCostRun("clientonly", target, none("server-proxy", "server"), client), ""},
		// Within 15%: a figure of the cgroups' 0.30 read as 0.33.
		{"near", sidecarCostRun("both", fig("target", "target", "", 0.33), server, client), ""},
		// The old selection: the target's figure was its whole pod, the
		// server's sidecar with it.
		{"server in the target", sidecarCostRun("both", fig("target", "target", "", 0.50), server, client), "the target (its servers' containers) (metrics.k8s.io): 0.500 cores"},
		// One figure for every proxy beside each side's: the server's
		// sidecar (and the clients') counted twice.
		{"proxies twice", sidecarCostRun("both", target, server, client, fig("proxy", "proxy", "", 0.45)), "a proxy is counted twice"},
		// The old one-sided modes: one proxy figure over every pod, not
		// measurable as a pod without the container had no sample.
		{"serveronly unmeasured", sidecarCostRun("serveronly", target, results.ProcessCost{Name: "proxy", Role: "proxy", Unmeasured: "not measurable at this step length"}),
			"the server proxy: no figure"},
		{"clientonly unmeasured", sidecarCostRun("clientonly", target, results.ProcessCost{Name: "client-proxy", Role: "proxy", Side: "client", Unmeasured: "not measurable at this step length"}),
			"the client proxies: not measured"},
		// A side the mode leaves bare given a figure.
		{"serveronly with a client figure", sidecarCostRun("serveronly", target, server, fig("client-proxy", "proxy", "client", 0.25)), "the mode places no such proxy"},
	} {
		t.Run(c.name, func(t *testing.T) {
			errs := c.r.costs()
			switch {
			case c.want == "" && len(errs) > 0:
				t.Errorf("errors %q, want none", errs)
			case c.want != "" && !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, c.want) }):
				t.Errorf("errors %q, want one saying %q", errs, c.want)
			}
		})
	}
}

// TestTableSides checks that the figures of the table k8s run prints are
// found under their heads (report.SweepTable at its default width, as k8s run
// prints it to a pipe) and checked against the step's: right when they are
// the step's, wrong when the step's figure differs or the table has no such
// column (the cost code before issue 35 had one proxy figure).
func TestTableSides(t *testing.T) {
	step := func(watched ...results.ProcessCost) *results.Step {
		st := &results.Step{ID: "c8t2-mesh", Path: "mesh", Rung: "c8t2", Connections: 8, Threads: 2, Repeat: 1,
			Run: &results.Run{Config: results.Config{Protocol: "http1", Rate: 1500}, Summary: results.Summary{Requests: 96673, RPS: 1487.3,
				Duration: results.Duration(65 * time.Second), Latency: results.Latency{P50: 900, P90: 1500, P99: 4000, P999: 9000},
				Status: map[int]int64{200: 96673}}},
			Watched: watched}
		for i := range st.Watched {
			st.Watched[i].CPUPer1kRPS = st.Watched[i].CPUMean / (st.Run.Summary.RPS / 1000)
		}
		return st
	}
	w := func(name, role, side string, cores float64) results.ProcessCost {
		return results.ProcessCost{Name: name, Role: role, Side: side, Samples: 7, Processes: 1, CPUMean: cores, MemMean: 30 << 20}
	}
	sides := []results.ProcessCost{w("client-proxy", "proxy", "client", 0.2113), w("server-proxy", "proxy", "server", 0.1742),
		w("target", "target", "", 0.0931), w("node", "node", "", 1.31)}
	printed := func(st *results.Step) string {
		var b bytes.Buffer
		b.WriteString("step 1/1 c8t2 mesh: 96673 requests\n\n")
		if err := report.SweepTable(&b, "", []*results.Step{st}, report.TableOptions{}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	st := step(slices.Clone(sides)...)
	r := &sidecarRun{steps: []*results.Step{st}, out: printed(st)}
	if errs := r.tableSides(); len(errs) > 0 {
		t.Fatalf("the table as printed: %q\n%s", errs, r.out)
	}
	if got, err := tableFigure(r.out, "server cpu/1k", "mesh"); got != "0.117" || err != nil {
		t.Errorf("server cpu/1k = %q, %v; want 0.117 (0.1742 cores at 1487.3/s)\n%s", got, err, r.out)
	}
	// The step's server figure 2% off what the table printed.
	r.steps[0].Watched[1].CPUMean *= 1.02
	if errs := r.tableSides(); !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, "server cpu/1k: the table shows 0.117") }) {
		t.Errorf("a figure other than the step's: errors %q", errs)
	}
	// One proxy figure, no side: no side columns.
	old := step(w("proxy", "proxy", "", 0.3855), w("target", "target", "", 0.0931))
	r = &sidecarRun{steps: []*results.Step{old}, out: printed(old)}
	if errs := r.tableSides(); !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, `no "client cpu/1k" column`) }) {
		t.Errorf("a table without the sides' columns: errors %q\n%s", errs, r.out)
	}
}

// TestCPUTruthInitContainers checks the cgroups' truth over a window with
// a worker's init container in it (linkerd-init): one that ended before
// the window counts for nothing, however few polls caught it running (CI
// failed on one poll's sample, 2026-12-07); one still running or
// ending within the window needs two samples, as any container.
func TestCPUTruthInitContainers(t *testing.T) {
	f := newFakeNode()
	f.pod("w", false, "0", "worker")
	f.o.cpu[containerKey{"w", "worker"}] = []cgSample{{at: f.at(0)}, {at: f.at(100), usage: 50}}
	from, to := f.at(10), f.at(60)
	init := containerKey{"w", "linkerd-init"}
	f.o.cpu[init] = []cgSample{{at: f.at(1), usage: 0.02}}
	all := func(string) bool { return true }
	keys := f.o.keys(func(podInfo) bool { return true }, all)
	if _, err := f.o.cpuTruth(keys, from, to); err == nil || !strings.Contains(err.Error(), "1 cgroup samples of w/linkerd-init") {
		t.Fatalf("an init container of one sample not known to have ended: err %v, want one saying so", err)
	}
	f.o.finished[init] = f.at(8.5) // ended before the window, with FinishedAt's second of margin
	got, err := f.o.cpuTruth(keys, from, to)
	if err != nil || got != 0.5 {
		t.Fatalf("an init container that ended before the window: %v cores, %v; want the worker's 0.5 alone", got, err)
	}
	f.o.finished[init] = f.at(9.5) // within a second of the window's start: not known to be before it
	if _, err := f.o.cpuTruth(keys, from, to); err == nil {
		t.Fatal("an init container that may have ended in the window: no error")
	}
}
