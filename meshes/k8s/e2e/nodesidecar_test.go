package e2e

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/e2e/node"
	"loadgen/results"
	"loadgen/results/store"
)

// TestNodeSidecars runs real sidecars on the node — `k8s run --mesh
// sidecar` with HAProxy, nginx and Caddy, and `--mesh istio` and
// `--mesh linkerd` through the injection webhook, which plays those
// meshes' injection contracts with the same capture and a real HAProxy —
// and checks a run's figures against what the node itself says:
//
//   - crossings: a direct step's requests reach no proxy (each proxy's
//     own counter — HAProxy's stats, nginx's stub_status, Caddy's
//     metrics — does not move), a mesh step's cross the proxies its mode
//     places, each side counting the step's requests, and --mode none
//     has no proxy; where the webhook breaks the direct port's exclusion
//     on purpose, the check fails;
//   - cost: the target's CPU figure is its servers' containers' cgroups
//     within 15%, the server proxy's and the client proxies' figures
//     theirs, each proxy counted once, from metrics-server and from
//     Prometheus; serveronly and clientonly each have the figure of the
//     side that has a proxy (HAProxy's and Istio's); the table k8s run
//     prints shows each side's figure per 1000 requests/s;
//   - presence: with the webhook off, k8s run --mesh istio refuses to
//     measure, naming the missing container.
//
// The cost checks are issue 35's model (points 2 and 3): they fail on a
// cost selection that counts the server's sidecar in the target's figure
// or has no figure per side.
func TestNodeSidecars(t *testing.T) {
	n := testNode(t)
	bin := buildLoadgen(t)
	ctx := context.Background()
	started := time.Now()
	images, err := n.SidecarImages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sidecar images %v imported in %v", images, time.Since(started).Round(time.Second))
	// The webhook breaks the direct port's exclusion on purpose in one
	// namespace: the crossing check must see the baseline cross the proxy.
	webhook := node.InjectionConfig{Proxy: k8s.ProxyHAProxy, ProxyImage: images[k8s.ProxyHAProxy], CaptureImage: n.Image,
		Upstream: "loadgen-target.{namespace}.svc.cluster.local:8080", ExcludeOutboundIPRanges: []string{n.Addr.APIServiceIP + "/32"},
		BreakExclusionsIn: []string{"node-sc-istio-broken"}}
	wh, err := n.StartInjectionWebhook(ctx, webhook)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if wh != nil {
			wh.Close()
		}
	}()
	sidecar := func(proxy, mode string) []string {
		return []string{"--mesh", "sidecar", "--proxy", proxy, "--proxy-image", images[proxy], "--mode", mode}
	}
	mesh := func(m, mode string) []string { return []string{"--mesh", m, "--mode", mode} }
	haproxy := func(name string, args []string, server, client bool) sidecarCase {
		return sidecarCase{name: name, args: args, container: k8s.ContainerSidecar, counter: k8s.ProxyHAProxy, server: server, client: client}
	}
	istio := func(name string, mode string, server, client bool) sidecarCase {
		return sidecarCase{name: name, args: mesh(k8s.MeshIstio, mode), container: "istio-proxy", counter: k8s.ProxyHAProxy, server: server, client: client}
	}
	linkerd := func(name string, mode string, server, client bool) sidecarCase {
		return sidecarCase{name: name, args: mesh(k8s.MeshLinkerd, mode), container: "linkerd-proxy", counter: k8s.ProxyHAProxy, server: server, client: client}
	}

	t.Run("crossings", func(t *testing.T) {
		cases := []sidecarCase{
			haproxy("haproxy-both", sidecar(k8s.ProxyHAProxy, k8s.ModeBoth), true, true),
			haproxy("haproxy-serveronly", sidecar(k8s.ProxyHAProxy, k8s.ModeServerOnly), true, false),
			haproxy("haproxy-clientonly", sidecar(k8s.ProxyHAProxy, k8s.ModeClientOnly), false, true),
			// Mutual TLS between the sidecars, each proxy counted by its
			// own counter: nginx's stub_status, Caddy's HTTP metrics.
			{name: "nginx-both-mtls", args: append(sidecar(k8s.ProxyNginx, k8s.ModeBoth), "--mtls"), container: k8s.ContainerSidecar,
				counter: k8s.ProxyNginx, server: true, client: true},
			{name: "caddy-both-mtls", args: append(sidecar(k8s.ProxyCaddy, k8s.ModeBoth), "--mtls"), container: k8s.ContainerSidecar,
				counter: k8s.ProxyCaddy, server: true, client: true},
			istio("istio-both", k8s.ModeBoth, true, true),
			istio("istio-serveronly", k8s.ModeServerOnly, true, false),
			istio("istio-clientonly", k8s.ModeClientOnly, false, true),
			linkerd("linkerd-both", k8s.ModeBoth, true, true),
			linkerd("linkerd-serveronly", k8s.ModeServerOnly, true, false),
			linkerd("linkerd-clientonly", k8s.ModeClientOnly, false, true),
			istio("istio-broken", k8s.ModeServerOnly, true, false),
			// --mode none: the same objects without a proxy, which no
			// request crosses and no pod has.
			haproxy("haproxy-none", sidecar(k8s.ProxyHAProxy, k8s.ModeNone), false, false),
		}
		// Seven at once, the thirteen in two rounds as the ten were at
		// five: a crossing step is an open loop of a few hundred requests
		// a second (crossingSweep), light beside the pods' starts.
		runs := runCases(t, n, bin, "x", cases, crossingSweep(t), 7)
		for _, r := range runs {
			t.Run(r.c.name, func(t *testing.T) {
				if r.err != "" {
					t.Fatal(r.err)
				}
				errs := r.crossings()
				for _, note := range r.notes {
					t.Log(note)
				}
				if r.c.name != "istio-broken" {
					for _, e := range errs {
						t.Error(e)
					}
					return
				}
				// The direct port's exclusion broken on purpose: the check
				// must say the baseline crossed the server's proxy.
				if !slices.ContainsFunc(errs, func(e string) bool { return strings.Contains(e, "(direct)") && strings.Contains(e, "server proxy") }) {
					t.Errorf("with the direct port captured, the crossing check found %q", errs)
				}
				t.Logf("the broken exclusion, as the check reports it: %q", errs)
			})
		}
	})

	// A chain of three targets through --mesh sidecar (issue 39, point
	// 9): every answer comes back through the three hops, each mesh
	// request crosses every hop's sidecar and the baseline's chain none,
	// and the report gives the added figures per hop.
	//
	// With the cost of the nodes and of a control plane, from Prometheus.
	// The chain's first target stands in for a control plane: a pod that
	// lives through every step, as istiod does, and is busy in each (the
	// workers' pods would take in the step before's, ended; an idle pod's
	// cgroup hardly moves, and cAdvisor measures it seldom). The cost
	// cases' step length, so that cAdvisor's housekeeping gives each
	// series the measurements a figure needs.
	//
	// It runs beside the cost cases (started here, checked after them): its
	// checks are its proxies' counts and that each figure is there, which
	// the other runs' load does not change, nor it theirs, each held to
	// its own cgroups. An open loop, light beside them.
	hopsCase := haproxy("haproxy-hops3", append(sidecar(k8s.ProxyHAProxy, k8s.ModeBoth), "--hops", "3", "--prometheus", n.PrometheusURL,
		"--control-plane", "stand-in=node-sc-haproxy-hops3/"+k8s.LabelName+"="+k8s.TargetName), true, true)
	hopsCase.source = "prometheus"
	hopsSweep := writeNodeSweep(t, "ladder: c2t1", "rate: [200]", "duration: "+costDuration.String(), "warmup: "+costWarmup.String(),
		`paths: [{name: direct, url: "http://target:8081", baseline: true}, {name: mesh, url: "http://target:8080"}]`)
	hopsDir := filepath.Join(t.TempDir(), "hops")
	hopsRun := make(chan *sidecarRun, 1)
	go func() { hopsRun <- runCase(n, bin, "h0", hopsCase, hopsSweep, hopsDir) }()
	hopsChecked := false
	defer func() {
		if !hopsChecked {
			<-hopsRun // a test that stopped early still waits for its run
		}
	}()
	t.Run("cost", func(t *testing.T) {
		prom := []string{"--prometheus", n.PrometheusURL}
		withSource := func(c sidecarCase, name string, extra []string) sidecarCase {
			c.name, c.args, c.counter = name, append(slices.Clone(c.args), extra...), ""
			c.source = "metrics.k8s.io"
			if len(extra) > 0 {
				c.source = "prometheus"
			}
			return c
		}
		cases := []sidecarCase{
			withSource(haproxy("", sidecar(k8s.ProxyHAProxy, k8s.ModeBoth), true, true), "haproxy-both-metrics", nil),
			withSource(haproxy("", sidecar(k8s.ProxyHAProxy, k8s.ModeBoth), true, true), "haproxy-both-prometheus", prom),
			withSource(haproxy("", sidecar(k8s.ProxyHAProxy, k8s.ModeServerOnly), true, false), "haproxy-serveronly-metrics", nil),
			withSource(haproxy("", sidecar(k8s.ProxyHAProxy, k8s.ModeServerOnly), true, false), "haproxy-serveronly-prometheus", prom),
			withSource(haproxy("", sidecar(k8s.ProxyHAProxy, k8s.ModeClientOnly), false, true), "haproxy-clientonly-metrics", nil),
			withSource(haproxy("", sidecar(k8s.ProxyHAProxy, k8s.ModeClientOnly), false, true), "haproxy-clientonly-prometheus", prom),
			// Istio's one-sided modes through the injection webhook: each
			// has the figure of the side that has istio-proxy.
			withSource(istio("", k8s.ModeServerOnly, true, false), "istio-serveronly-metrics", nil),
			withSource(istio("", k8s.ModeClientOnly, false, true), "istio-clientonly-metrics", nil),
			withSource(istio("", k8s.ModeBoth, true, true), "istio-both-metrics", nil),
			withSource(linkerd("", k8s.ModeBoth, true, true), "linkerd-both-prometheus", prom),
		}
		// No control plane runs here (the webhook plays the injector):
		// the workers' whole pods stand in for one, named by
		// --control-plane as a user names istiod's, and checked against
		// their cgroups like the other figures.
		for i := len(cases) - 2; i < len(cases); i++ {
			cases[i].controlPlane = true
			cases[i].args = append(cases[i].args, "--control-plane", "stand-in=node-sc-"+cases[i].name+"/"+k8s.LabelName+"="+k8s.ClientName)
		}
		// Open loop at a rate the node carries five runs of at once (the
		// ten cases in two rounds) with the chain beside them and CPU to
		// spare: a closed loop would take both CPUs, and the node's own
		// components with them. At 1200 requests/s each the node ran at
		// 1.96 of its 2 cores, and the kubelet's cAdvisor, starved,
		// measured a worker pod only every 29 to 36 s (a figure needs
		// three measurements in the step: CI failed on it, 2026-12-07).
		// At 600 the node still ran at 1.95–1.97 cores (five cases of
		// ~0.34 cores each: target, proxies, workers), and once a new
		// target's idle container had one measurement in the step and
		// could not be told idle (CI, 2026-12-07 evening; the message now
		// says why): 300 should leave the node about half a core.
		sweep := writeNodeSweep(t, "ladder: c8t2", "rate: [300]", "duration: "+costDuration.String(), "warmup: "+costWarmup.String(),
			`paths: [{name: mesh, url: "http://target:8080"}]`)
		runs := runCases(t, n, bin, "c", cases, sweep, 5)
		for _, r := range runs {
			t.Run(r.c.name, func(t *testing.T) {
				if r.err != "" {
					t.Fatal(r.err)
				}
				for _, e := range r.costs() {
					t.Error(e)
				}
				// The table k8s run printed shows each side's figure the
				// check above verified (issue 36: haproxy in both modes
				// prints the client-proxy and server-proxy columns).
				if strings.HasPrefix(r.c.name, "haproxy-both-") {
					for _, e := range r.tableSides() {
						t.Error(e)
					}
				}
			})
		}
	})

	t.Run("hops", func(t *testing.T) {
		c, dir := hopsCase, hopsDir
		r := <-hopsRun
		hopsChecked = true
		noneLeftOn(t, n.Client, "node-sc-"+c.name)
		if r.err != "" {
			t.Fatal(r.err)
		}
		for _, e := range r.hopCrossings(3) {
			t.Error(e)
		}
		for _, note := range r.notes {
			t.Log(note)
		}
		rep := runLoadgen(t, bin, n.Kubeconfig, time.Minute, "report", "--wide", dir)
		if rep.code != 0 || !strings.Contains(rep.stdout, "+p99/hop") || !strings.Contains(rep.stdout, "crosses 3 targets") {
			t.Errorf("loadgen report of the chain has no per-hop figures: %v", rep)
		}
		// The node's and the control plane's columns, with figures.
		for _, st := range r.steps {
			roles := map[string]bool{}
			for _, w := range st.Watched {
				if w.Unmeasured == "" && w.CPUMean > 0 {
					roles[w.Role] = true
				}
			}
			if !roles["node"] || !roles["control-plane"] {
				var why []string
				for _, w := range st.Watched {
					if w.Unmeasured != "" {
						why = append(why, w.Name+": "+w.Unmeasured)
					}
				}
				t.Errorf("step %s: measured roles %v, want the node's and the control plane's (%s)", st.ID, roles, strings.Join(why, "; "))
			}
		}
		if !strings.Contains(rep.stdout, "node cpu") || !strings.Contains(rep.stdout, "cp cpu") {
			t.Errorf("loadgen report of the chain has no node or control-plane column:\n%s", rep.stdout)
		}
	})

	// The webhook off: nothing injects istio-proxy, and k8s run refuses.
	t.Run("webhook-off", func(t *testing.T) {
		if err := wh.Close(); err != nil {
			t.Fatal(err)
		}
		wh = nil
		dir := filepath.Join(t.TempDir(), "results")
		r := runLoadgen(t, bin, n.Kubeconfig, 4*time.Minute, append([]string{"k8s", "run", "-n", "node-sc-off", "-f", crossingSweep(t), "--workers", "1",
			"-o", dir, "--image", n.Image, "--same-node-ok", "--start-lead", sidecarStartLead, "--target-wait", "90s", "--no-metrics", "--run-id", "off"},
			mesh(k8s.MeshIstio, k8s.ModeBoth)...)...)
		if r.code != 1 || !strings.Contains(r.stderr, "has no istio-proxy container") {
			t.Errorf("k8s run --mesh istio without its injector: %v", r)
		}
		noneLeftOn(t, n.Client, "node-sc-off")
	})
	t.Logf("TestNodeSidecars: %v", time.Since(started).Round(time.Second))
}

// sidecarStartLead is these runs' --start-lead: a pod with a capture
// init container and a proxy whose startup probe holds the worker back
// starts later than a plain one, on a node that runs several at once.
const sidecarStartLead = "25s"

// crossingSweep is a short step on the direct port, then one on the
// mesh's: each proxy's counter is read in between. An open loop: the
// counts need requests, not the node's every cycle, and seven runs
// share its two cores.
func crossingSweep(t *testing.T) string {
	return writeNodeSweep(t, "ladder: c2t1", "rate: [400]", "duration: 3s",
		`paths: [{name: direct, url: "http://target:8081", baseline: true}, {name: mesh, url: "http://target:8080"}]`)
}

// sidecarCase is one k8s run of the test and where its proxies are.
type sidecarCase struct {
	name      string
	args      []string // the mesh's flags
	container string   // the proxy's container
	counter   string   // how to read its requests (haproxy, nginx); "" not read
	server    bool     // the target has a proxy
	client    bool     // the workers have one
	// controlPlane is set when --control-plane names the workers' pods, whose
	// figure is then checked as a control plane's.
	controlPlane bool
	source       string // the cost's source, for messages
}

// sidecarRun is a finished run with what the node said meanwhile.
type sidecarRun struct {
	c     sidecarCase
	err   string // the run itself failed
	steps []*results.Step
	obs   *observer
	out   string
	notes []string // what the proxies counted, per step
}

// runCases runs the cases, at most par at once, each in a namespace of
// its own, and returns them in order.
func runCases(t *testing.T, n *node.Node, bin, prefix string, cases []sidecarCase, sweep string, par int) []*sidecarRun {
	t.Helper()
	runs := make([]*sidecarRun, len(cases))
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			runs[i] = runCase(n, bin, fmt.Sprintf("%s%d", prefix, i), c, sweep, filepath.Join(t.TempDir(), "results"))
		}()
	}
	wg.Wait()
	for _, r := range runs {
		noneLeftOn(t, n.Client, "node-sc-"+r.c.name)
	}
	return runs
}

func runCase(n *node.Node, bin, runID string, c sidecarCase, sweep, dir string) *sidecarRun {
	ns := "node-sc-" + c.name
	r := &sidecarRun{c: c, obs: observe(n.Client, ns, c.container, c.counter)}
	defer r.obs.Stop()
	args := append([]string{"k8s", "run", "-n", ns, "-f", sweep, "--workers", "2", "-o", dir, "--image", n.Image,
		"--same-node-ok", "--start-lead", sidecarStartLead, "--target-wait", "120s", "--run-id", runID}, c.args...)
	if c.source == "" {
		args = append(args, "--no-metrics")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+n.Kubeconfig)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	started := time.Now()
	err := cmd.Run()
	r.out = out.String()
	if err != nil {
		r.err = fmt.Sprintf("k8s run %s: %v\n%s", strings.Join(c.args, " "), err, r.out)
		return r
	}
	_, steps, rerr := store.ReadSweep(dir)
	if rerr != nil || len(steps) == 0 {
		r.err = fmt.Sprintf("steps: %v\n%s", rerr, r.out)
		return r
	}
	r.steps = steps
	fmt.Fprintf(os.Stderr, "    %s: %d steps in %v\n", c.name, len(steps), time.Since(started).Round(time.Second))
	return r
}

// window is a step's load: from its start (less its warmup) to its end.
func window(st *results.Step) (time.Time, time.Time) {
	return st.Run.Start.Add(-st.Run.Config.Warmup.D()), st.Run.End
}

// crossings checks which proxies each step's requests crossed, by the
// proxies' own counters: none for the direct step, those the mode places
// for the mesh's, each side counting at least the step's requests; and a
// pod the mode places no proxy in has no proxy container. It returns
// what is wrong.
func (r *sidecarRun) crossings() []string {
	var bad []string
	if r.c.counter == "" {
		for _, st := range r.steps {
			if st.Run == nil || st.Run.Summary.Requests == 0 {
				bad = append(bad, fmt.Sprintf("step %s: no requests: %s", st.ID, st.Failed))
			}
		}
		return bad
	}
	r.obs.mu.Lock()
	pods := map[string]podInfo{}
	for p, i := range r.obs.pods {
		pods[p] = i
	}
	errs := r.obs.readErrs
	r.obs.mu.Unlock()
	// A pod of a side the mode leaves bare must have no proxy container at
	// all, read or not (--mode none: neither side has one).
	for pod, info := range pods {
		if has := r.obs.hasContainer(pod, r.c.container); has && ((info.target && !r.c.server) || (info.step != "" && !r.c.client)) {
			bad = append(bad, fmt.Sprintf("pod %s has a %s container, but mode %s places no proxy there", pod, r.c.container, r.c.name))
		}
	}
	for _, st := range r.steps {
		if st.Run == nil {
			bad = append(bad, fmt.Sprintf("step %s failed: %s", st.ID, st.Failed))
			continue
		}
		from, to := window(st)
		direct := st.Baseline
		reqs := st.Run.Summary.Requests
		var client, server int64
		var counted, unread []string // target pods with and without proxy readings
		workers := 0
		var clientRead time.Time // the earliest of the step's client proxies' last readings
		for pod, info := range pods {
			switch {
			case info.target:
				// A target pod whose proxy never ran (one replaced before
				// the steps) has no readings: the one that served has.
				d, ok := r.obs.delta(pod, from.Add(-time.Second), to.Add(time.Second))
				if ok {
					server += d
					counted = append(counted, pod)
				} else {
					unread = append(unread, pod+": "+errs[pod])
				}
			case info.step == strconv.Itoa(st.Index) && placed(st, pod):
				workers++
				d, ok := r.obs.delta(pod, time.Time{}, to.Add(time.Hour))
				switch {
				case !r.c.client && ok:
					bad = append(bad, fmt.Sprintf("step %s: worker %s has a proxy, mode %s places none", st.ID, pod, r.c.name))
				case r.c.client && !ok:
					bad = append(bad, fmt.Sprintf("step %s: worker %s's proxy counter was never read: %s", st.ID, pod, errs[pod]))
				case r.c.client && direct && d != 0:
					bad = append(bad, fmt.Sprintf("step %s (direct): worker %s's client proxy counted %d requests: the baseline crossed it", st.ID, pod, d))
				}
				if last := r.obs.lastRead(pod); ok && (clientRead.IsZero() || last.Before(clientRead)) {
					clientRead = last
				}
				client += d
			}
		}
		switch {
		case !r.c.server && len(counted) > 0:
			bad = append(bad, fmt.Sprintf("step %s: the target %v has a proxy, mode %s places none", st.ID, counted, r.c.name))
		case r.c.server && len(counted) == 0:
			bad = append(bad, fmt.Sprintf("step %s: the server proxy's counter was never read (%s)", st.ID, strings.Join(unread, "; ")))
		case r.c.server && direct && server != 0:
			bad = append(bad, fmt.Sprintf("step %s (direct): the server proxy counted %d requests: the baseline crossed it", st.ID, server))
		case r.c.server && !direct && server < reqs:
			bad = append(bad, fmt.Sprintf("step %s (mesh): the server proxy counted %d requests of the step's %d", st.ID, server, reqs))
		}
		if workers == 0 {
			bad = append(bad, fmt.Sprintf("step %s: no worker pod seen", st.ID))
		}
		r.notes = append(r.notes, fmt.Sprintf("%s: %d requests, %.0f/s; the server proxy counted %d, the client proxies %d",
			st.ID, reqs, st.Run.Summary.RPS, server, client))
		if r.c.client && !direct && workers > 0 && !clientRead.IsZero() {
			want, why := clientBound(st, clientRead)
			r.notes = append(r.notes, fmt.Sprintf("%s: the client proxies must have counted %d: %s", st.ID, want, why))
			if client < want || client == 0 {
				bad = append(bad, fmt.Sprintf("step %s (mesh): the client proxies counted %d requests, want at least %d (%s)", st.ID, client, want, why))
			}
		}
	}
	return bad
}

// placed tells whether the pod is one of the step's as its record places
// them (a step run again after its workers started late has the pods of
// its last run only), or the step places none.
func placed(st *results.Step, pod string) bool {
	if st.Cluster == nil || len(st.Cluster.Pods) == 0 {
		return true
	}
	return slices.ContainsFunc(st.Cluster.Pods, func(p results.PlacedPod) bool { return p.Name == pod })
}

// clientBound is how many requests a step's client proxies must have
// counted by read, the earliest of their last readings. A worker's proxy
// counts each request the worker sends it, whatever connection carried
// it and however often it tried its upstream (HAProxy's frontend req_tot
// and nginx's stub_status count a request as it arrives; Caddy's
// caddy_http_requests_total once its handler has answered, which
// readSlack allows for), so every request the step saw answered by read
// was counted. Read after the step's end, that is every request of the
// step. But a worker's pod ends with its run and the kubelet then stops
// the proxy: the last reading can come before the last requests. Then the
// bound is the step's timeline's requests (warm-up included: they
// crossed the proxy too) in the intervals surely ended by read: a merged
// interval lies up to half an interval off each worker's own (merge
// aligns them so), and the clocks are the one node's.
func clientBound(st *results.Step, read time.Time) (int64, string) {
	if !read.Before(st.Run.End.Add(readSlack)) {
		return st.Run.Summary.Requests, "read after the step's end: its every request"
	}
	var n int64
	for _, iv := range st.Run.Timeline {
		end := st.Run.Start.Add(iv.Start.D() + iv.Duration.D() + iv.Duration.D()/2 + readSlack)
		if !end.After(read) {
			n += iv.Requests
		}
	}
	return n, fmt.Sprintf("last read %.1f s before the step's end: the requests answered by then", st.Run.End.Sub(read).Seconds())
}

// readSlack is how long after answering a request a proxy may count it.
const readSlack = 100 * time.Millisecond

// hopCrossings checks a chain of hops targets (--hops): every step
// answered without an error, which only a whole chain can; the direct
// step's requests reached no hop's sidecar; the mesh step's crossed
// every hop's, each counting at least the step's requests.
func (r *sidecarRun) hopCrossings(hops int) []string {
	var bad []string
	r.obs.mu.Lock()
	pods := map[string]podInfo{}
	for p, i := range r.obs.pods {
		pods[p] = i
	}
	r.obs.mu.Unlock()
	for _, st := range r.steps {
		if st.Run == nil || st.Run.Summary.Requests == 0 || st.Run.Summary.Errors.Total() != 0 {
			var reqs, errs int64
			if st.Run != nil {
				reqs, errs = st.Run.Summary.Requests, st.Run.Summary.Errors.Total()
			}
			bad = append(bad, fmt.Sprintf("step %s: %d answers, %d errors, want answers only: %s", st.ID, reqs, errs, st.Failed))
			continue
		}
		from, to := window(st)
		reqs := st.Run.Summary.Requests
		for i := 1; i <= hops; i++ {
			name := k8s.HopName(i)
			var d int64
			read := false
			for pod, info := range pods {
				if info.labels[k8s.LabelName] != name {
					continue
				}
				if v, ok := r.obs.delta(pod, from.Add(-time.Second), to.Add(time.Second)); ok {
					d, read = d+v, true
				}
			}
			switch {
			case !read:
				bad = append(bad, fmt.Sprintf("step %s: %s's sidecar counter was never read", st.ID, name))
			case st.Baseline && d != 0:
				bad = append(bad, fmt.Sprintf("step %s (direct): %s's sidecar counted %d requests: the baseline's chain crossed it", st.ID, name, d))
			case !st.Baseline && d < reqs:
				bad = append(bad, fmt.Sprintf("step %s (mesh): %s's sidecar counted %d of the step's %d requests", st.ID, name, d, reqs))
			}
			r.notes = append(r.notes, fmt.Sprintf("%s: %d requests; %s's sidecar counted %d", st.ID, reqs, name, d))
		}
	}
	return bad
}

// costs checks the step's CPU figures against the containers' cgroups:
// the target's against its servers' containers, the server proxy's
// against its sidecar, the client proxies' against the workers', all the
// proxies' together against every sidecar (each counted once). It
// returns what is wrong.
func (r *sidecarRun) costs() []string {
	var bad []string
	st := r.steps[0]
	if st.Run == nil {
		return []string{"the step failed: " + st.Failed}
	}
	var target, server, client *results.ProcessCost
	var proxies []results.ProcessCost
	for i := range st.Watched {
		w := &st.Watched[i]
		switch {
		case w.Role == "target":
			target = w
		case w.Role == "proxy":
			proxies = append(proxies, *w)
			if strings.Contains(w.Name, "server") {
				server = w
			}
			if strings.Contains(w.Name, "client") {
				client = w
			}
		}
	}
	listed := func() string {
		var s []string
		for _, w := range st.Watched {
			s = append(s, fmt.Sprintf("%s (%s%s)", w.Name, w.Role, map[bool]string{true: ", not measured: " + w.Unmeasured}[w.Unmeasured != ""]))
		}
		return strings.Join(s, ", ")
	}
	isTarget := func(p podInfo) bool { return p.target }
	isWorker := func(p podInfo) bool { return p.step == strconv.Itoa(st.Index) && placed(st, p.name) }
	// Every server of the target pod, the idle ones too: each is a Go
	// process whose few thousandths of a core are the target's.
	app := func(name string) bool { return slices.Contains(k8s.TargetContainers(), name) }
	proxy := func(name string) bool { return name == r.c.container }
	// Each figure against its containers' cgroups over the span it covers;
	// what each figure should hold is added up for the proxies' total.
	var figures, truths float64
	whole := true
	check := func(what string, fig *results.ProcessCost, want bool, sel func(podInfo) bool, names func(string) bool) {
		switch {
		case !want && fig != nil && fig.CPUMean > 0:
			bad = append(bad, fmt.Sprintf("%s: %.3f cores, but the mode places no such proxy", what, fig.CPUMean))
			return
		case !want:
			return
		case fig == nil:
			bad = append(bad, fmt.Sprintf("%s: no figure (the step has %s)", what, listed()))
			whole = false
			return
		case fig.Unmeasured != "":
			bad = append(bad, fmt.Sprintf("%s: not measured: %s", what, fig.Unmeasured))
			whole = false
			return
		}
		from, to := window(st)
		if fig.CoveredFrom != nil && fig.CoveredTo != nil && fig.CoveredTo.After(*fig.CoveredFrom) {
			from, to = *fig.CoveredFrom, *fig.CoveredTo
		}
		truth, err := r.obs.cpuTruth(r.obs.keys(sel, names), from, to)
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", what, err))
			whole = false
			return
		}
		if fig.Role == "proxy" {
			figures += fig.CPUMean
			truths += truth
		}
		fmt.Fprintf(os.Stderr, "    %s %s: %s %.3f cores, its cgroups %.3f over %.0f s\n", r.c.name, r.c.source, what, fig.CPUMean, truth, to.Sub(from).Seconds())
		if truth < 0.005 || math.Abs(fig.CPUMean-truth) > 0.15*truth {
			bad = append(bad, fmt.Sprintf("%s (%s): %.3f cores, its containers' cgroups %.3f over %.0f s: off by more than 15%%",
				what, r.c.source, fig.CPUMean, truth, to.Sub(from).Seconds()))
		}
	}
	check("the target (its servers' containers)", target, true, isTarget, app)
	check("the server proxy", server, r.c.server, isTarget, proxy)
	check("the client proxies", client, r.c.client, isWorker, proxy)
	// The node's own figure (one node here): its root cgroup's.
	var nodes []*results.ProcessCost
	for i := range st.Watched {
		if st.Watched[i].Role == "node" {
			nodes = append(nodes, &st.Watched[i])
		}
	}
	if len(nodes) != 1 {
		bad = append(bad, fmt.Sprintf("%d node figures, want the one node's (the step has %s)", len(nodes), listed()))
	} else if n := nodes[0]; n.Unmeasured != "" {
		bad = append(bad, fmt.Sprintf("the node: not measured: %s", n.Unmeasured))
	} else {
		from, to := window(st)
		if n.CoveredFrom != nil && n.CoveredTo != nil && n.CoveredTo.After(*n.CoveredFrom) {
			from, to = *n.CoveredFrom, *n.CoveredTo
		}
		truth, err := r.obs.cpuTruth([]containerKey{nodeKey}, from, to)
		fmt.Fprintf(os.Stderr, "    %s %s: %s %.3f cores, its root cgroup %.3f over %.0f s\n", r.c.name, r.c.source, n.Name, n.CPUMean, truth, to.Sub(from).Seconds())
		if err != nil || math.Abs(n.CPUMean-truth) > 0.15*truth {
			bad = append(bad, fmt.Sprintf("%s (%s): %.3f cores, the root cgroup %.3f over %.0f s (%v): off by more than 15%%",
				n.Name, r.c.source, n.CPUMean, truth, to.Sub(from).Seconds(), err))
		}
	}
	if r.c.controlPlane {
		var cp *results.ProcessCost
		for i := range st.Watched {
			if st.Watched[i].Role == "control-plane" {
				cp = &st.Watched[i]
			}
		}
		check("the control plane (its stand-in: the workers' whole pods)", cp, true, isWorker, func(string) bool { return true })
	}
	// Each proxy counted once: every proxy figure together is what the
	// server's and the clients' figures should hold, no more (a proxy
	// counted under another name too adds to it).
	for _, p := range proxies {
		if (server == nil || p.Name != server.Name) && (client == nil || p.Name != client.Name) {
			figures += p.CPUMean
		}
	}
	if whole && math.Abs(figures-truths) > 0.15*truths {
		bad = append(bad, fmt.Sprintf("the proxies' figures add up to %.3f cores, the sidecars' cgroups to %.3f: a proxy is counted twice (%s)", figures, truths, listed()))
	}
	return bad
}

// tableSides checks the table k8s run printed (r.out) against the step's
// figures: its mesh row's client cpu/1k and server cpu/1k are each side's
// proxies' CPU, which costs checks against their cgroups, per 1000
// requests/s of the step, as printed (three decimals). It returns what
// is wrong.
func (r *sidecarRun) tableSides() []string {
	st := r.steps[0]
	if st.Run == nil || st.Run.Summary.RPS <= 0 {
		return []string{"the step has no rate: " + st.Failed}
	}
	var bad []string
	for _, side := range []string{"client", "server"} {
		var cores float64
		n := 0
		for _, w := range st.Watched {
			if w.Role == "proxy" && w.Side == side && w.NoProxy == "" && w.Unmeasured == "" {
				cores += w.CPUMean
				n++
			}
		}
		col := side + " cpu/1k"
		cell, err := tableFigure(r.out, col, st.Path)
		if err != nil {
			bad = append(bad, err.Error())
			continue
		}
		want := cores / (st.Run.Summary.RPS / 1000)
		got, err := strconv.ParseFloat(cell, 64)
		switch {
		case n == 0:
			bad = append(bad, fmt.Sprintf("%s: the step has no measured %s proxy figure (table: %q)", col, side, cell))
		case err != nil:
			bad = append(bad, fmt.Sprintf("%s: the table shows %q, want %.3f", col, cell, want))
		case math.Abs(got-want) > 0.0005+1e-9:
			bad = append(bad, fmt.Sprintf("%s: the table shows %s, the step's %s proxy %.4f cores at %.0f requests/s is %.4f", col, cell, side, cores, st.Run.Summary.RPS, want))
		}
	}
	return bad
}

// tableFigure is what a sweep table in out (loadgen's output, other
// lines among it) shows in column col of path's row: the table aligns a
// figure's right edge with its head's.
func tableFigure(out, col, path string) (string, error) {
	var head []rune
	at := -1
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 0 && f[0] == "step":
			head, at = []rune(line), -1
			r := []rune(col)
			for i := 0; i+len(r) <= len(head); i++ {
				if string(head[i:i+len(r)]) == col && (i == 0 || head[i-1] == ' ') && (i+len(r) == len(head) || head[i+len(r)] == ' ') {
					at = i + len(r)
					break
				}
			}
		case head != nil && len(f) > 1 && f[1] == path:
			if at < 0 {
				return "", fmt.Errorf("the table has no %q column: %s", col, string(head))
			}
			row := []rune(line)
			if at > len(row) || (at < len(row) && row[at] != ' ') {
				return "", fmt.Errorf("%q: the %s row does not line up with the head:\n%s\n%s", col, path, string(head), line)
			}
			start := at
			for start > 0 && row[start-1] != ' ' {
				start--
			}
			return string(row[start:at]), nil
		}
	}
	return "", fmt.Errorf("no table with a %s row in the output:\n%s", path, out)
}
