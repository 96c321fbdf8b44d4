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
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"loadgen/meshes/k8s"
	k8scluster "loadgen/meshes/k8s/cluster"
	"loadgen/meshes/k8s/cost"
	"loadgen/meshes/k8s/e2e/node"
	"loadgen/results"
	"loadgen/results/store"
)

// TestNodeCost checks the target's cost figures of a real k8s run against
// what the target pod's own cgroup accounted over the same window (read
// by the test from the node's cgroup files), from both sources: cAdvisor
// through Prometheus, and metrics-server through metrics.k8s.io. Each
// must be within 15%; the same source asked for the namespace's pods
// instead of the watched one (the workers' CPU in it) must not be; and a
// step shorter than metrics-server's windows says it is not measurable.
func TestNodeCost(t *testing.T) {
	n := testNode(t)
	bin := buildLoadgen(t)
	sweep := writeNodeSweep(t, "ladder: c8t2", "duration: "+costDuration.String(), "warmup: "+costWarmup.String(),
		`paths: [{name: direct, url: "http://target:8081", baseline: true}]`)

	// One run, its cost from metrics.k8s.io (k8s run's default); the test
	// reads Prometheus over the same load afterwards (it keeps its samples),
	// for the target's pod and for the namespace's.
	c := runWithTruth(t, n, bin, "node-cost", sweep)
	t.Run("metrics.k8s.io", func(t *testing.T) {
		got := c.target(t)
		if !strings.HasPrefix(got.Selector, "k8s:") {
			t.Errorf("the figure came from %s, not metrics.k8s.io", got.Selector)
		}
		c.check(t, "metrics.k8s.io (metrics-server)", got)
		bad := c.wrongPodMetrics
		if bad.Unmeasured != "" {
			t.Fatalf("the namespace's pods, from metrics.k8s.io: %s", bad.Unmeasured)
		}
		if truth, span := c.truthOver(t, bad); within(bad.CPUMean, truth) {
			t.Errorf("the namespace's pods read %.3f cores from metrics.k8s.io, within 15%% of the target's %.3f over %s: the check cannot tell a wrong selector", bad.CPUMean, truth, span)
		}
		t.Logf("metrics.k8s.io, the namespace's %d pods: %.3f cores", bad.Processes, bad.CPUMean)
	})
	t.Run("prometheus", func(t *testing.T) {
		read := func(w cost.Watch, names []string) results.ProcessCost {
			var pods []cost.Pod
			for _, name := range names {
				pods = append(pods, cost.Pod{Name: name})
			}
			p := &cost.Prometheus{URL: n.PrometheusURL, Pods: func(context.Context, cost.Watch) ([]cost.Pod, error) { return pods, nil }}
			stop, err := p.Start(context.Background(), w, c.window())
			if err != nil {
				t.Fatal(err)
			}
			got, err := stop()
			if err != nil || got.Unmeasured != "" {
				t.Fatalf("%s: %+v %v", w.Selector, got, err)
			}
			return got
		}
		got := read(cost.Watch{Name: "target", Role: "target", Namespace: c.ns, Selector: k8s.LabelName + "=" + k8s.TargetName}, c.targetPods)
		c.check(t, "Prometheus (cAdvisor)", got)
		// The namespace's pods instead of the watched one: the workers'
		// CPU is in it, and the check must fail.
		bad := read(cost.Watch{Name: "target", Role: "target", Namespace: c.ns, Selector: k8s.Selector("")}, c.pods)
		if truth, span := c.truthOver(t, bad); within(bad.CPUMean, truth) {
			t.Errorf("the namespace's pods (%d: %v) read %.3f cores, within 15%% of the target's %.3f over %s: the check cannot tell a wrong selector", bad.Processes, c.pods, bad.CPUMean, truth, span)
		}
		t.Logf("Prometheus, the namespace's %d pods: %.3f cores (the target's cgroup: %.3f)", bad.Processes, bad.CPUMean, c.truthCores)
	})

	t.Run("too-short", func(t *testing.T) {
		// A 5 s step through k8s run --prometheus: cAdvisor measures every
		// 10 to 20 s, so no figure (metrics-server's 15 s windows are the
		// same case: meshes/k8s/cost's tests).
		short := writeNodeSweep(t, "ladder: c4t2", "duration: 5s",
			`paths: [{name: direct, url: "http://target:8081", baseline: true}]`)
		dir := filepath.Join(t.TempDir(), "results")
		r := runLoadgen(t, bin, n.Kubeconfig, 5*time.Minute, "k8s", "run", "-n", "node-cost-short", "-f", short, "--workers", "2",
			"-o", dir, "--image", n.Image, "--same-node-ok", "--start-lead", nodeStartLead, "--target-wait", "90s", "--run-id", "short",
			"--prometheus", n.PrometheusURL)
		if r.code != 0 {
			t.Fatalf("k8s run: %v", r)
		}
		_, steps, err := store.ReadSweep(dir)
		if err != nil || len(steps) != 1 || steps[0].Run == nil {
			t.Fatalf("steps %v %v", steps, err)
		}
		w := findCost(steps[0].Watched, "target")
		if w == nil || !strings.HasPrefix(w.Selector, "prometheus:") || !strings.Contains(w.Unmeasured, "not measurable at this step length") || w.CPUMean != 0 {
			t.Fatalf("a 5 s step's target cost from Prometheus: %+v", w)
		}
		rep := runLoadgen(t, bin, n.Kubeconfig, time.Minute, "report", dir)
		if rep.code != 0 || !strings.Contains(rep.stdout, "not measurable at this step length") {
			t.Errorf("the report does not say the cost is not measurable:\n%v", rep)
		}
		noneLeftOn(t, n.Client, "node-cost-short")
	})
}

// The cost step's load: 90 s, so that metrics-server (15 s windows, a new
// pod's first one late) and cAdvisor (its housekeeping backs off to 15 s
// and is jittered up to twice that: 10 to 30 s apart, a new container's
// first measure late) measure every pod of it enough, the workers
// included: a Prometheus figure needs three cAdvisor measurements within
// the load. With 35 s a worker once held one cAdvisor sample and the
// namespace's figure was rightly not measurable (a CI run of 2026-12-05);
// with 70 s a worker pod's series came every 29 s and held one in its
// step (twice, 2026-12-07: loadgen said a figure needs 1m27s of load).
const (
	costWarmup   = 5 * time.Second
	costDuration = 85 * time.Second
)

// costRun is a finished run and what the target's cgroup accounted.
type costRun struct {
	ns         string
	step       *results.Step
	truthCores float64 // over the step's measured window
	truthMem   float64 // working set, mean over the window
	samples    []cgSample
	pods       []string // the namespace's pods that ran
	targetPods []string
	// wrongPodMetrics is metrics.k8s.io read for the namespace's pods
	// (target and workers) over the same load.
	wrongPodMetrics results.ProcessCost
}

func (c *costRun) window() cost.Window {
	return cost.Window{From: c.step.Run.Start.Add(-c.step.Run.Config.Warmup.D()).Add(time.Second), To: c.step.Run.End, Measured: c.step.Run.Config.Duration.D()}
}

func within(cores, truth float64) bool {
	return math.Abs(cores-truth) <= 0.15*truth
}

// truthOver is what the cgroup accounted over the span a figure covers
// (its source's first and last measurement within the load), else over
// the step's window: on a busy machine the load is not even over the
// step, and a figure of part of it is compared with that part.
func (c *costRun) truthOver(t *testing.T, got results.ProcessCost) (cores float64, span string) {
	t.Helper()
	if got.CoveredFrom == nil || got.CoveredTo == nil || !got.CoveredTo.After(*got.CoveredFrom) {
		return c.truthCores, "the step's window"
	}
	cores, _, ok := truth(c.samples, *got.CoveredFrom, *got.CoveredTo)
	if !ok {
		t.Fatalf("the cgroup samples do not span the figure's %v–%v", got.CoveredFrom, got.CoveredTo)
	}
	return cores, fmt.Sprintf("the figure's %.0f s (%.3f over the step's window)", got.CoveredTo.Sub(*got.CoveredFrom).Seconds(), c.truthCores)
}

func (c *costRun) target(t *testing.T) results.ProcessCost {
	t.Helper()
	w := findCost(c.step.Watched, "target")
	if w == nil {
		t.Fatalf("no target cost in the step: %+v", c.step.Watched)
	}
	if w.Unmeasured != "" {
		t.Fatalf("the target's cost was not measured: %s", w.Unmeasured)
	}
	return *w
}

func (c *costRun) check(t *testing.T, source string, got results.ProcessCost) {
	t.Helper()
	truthCores, span := c.truthOver(t, got)
	t.Logf("%s: target %.3f cores, %.1f MiB (covering %.0f s); its cgroup: %.3f cores over %s, %.1f MiB working set",
		source, got.CPUMean, float64(got.MemMean)/(1<<20), got.Covered, truthCores, span, c.truthMem/(1<<20))
	if c.truthCores < 0.05 {
		t.Fatalf("the target's cgroup accounted %.3f cores: no load reached it", c.truthCores)
	}
	if got.Covered < costDuration.Seconds()/3 {
		t.Errorf("%s: the figure covers %.0f s of the step's %v", source, got.Covered, costDuration)
	}
	if !within(got.CPUMean, truthCores) {
		t.Errorf("%s: target %.3f cores, its cgroup %.3f over %s: off by %.0f%%, more than 15%%", source, got.CPUMean, truthCores, span, 100*(got.CPUMean/truthCores-1))
	}
	if m := float64(got.MemMean); math.Abs(m-c.truthMem) > 0.25*c.truthMem {
		t.Errorf("%s: target memory %.1f MiB, its cgroup's working set %.1f MiB", source, m/(1<<20), c.truthMem/(1<<20))
	}
	if got.Processes != 1 {
		t.Errorf("%s: %d pods counted as the target", source, got.Processes)
	}
}

func findCost(ws []results.ProcessCost, name string) *results.ProcessCost {
	for i := range ws {
		if ws[i].Name == name {
			return &ws[i]
		}
	}
	return nil
}

// runWithTruth runs a one-step k8s run in ns and, while it runs, polls
// the target pod's cgroup (cpuacct.usage, memory usage less inactive
// file pages: the working set) every 250 ms; without --prometheus, it
// also reads metrics.k8s.io for the namespace's pods itself.
func runWithTruth(t *testing.T, n *node.Node, bin, ns, sweep string, extra ...string) *costRun {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "results")
	args := append([]string{"k8s", "run", "-n", ns, "-f", sweep, "--workers", "2", "-o", dir, "--image", n.Image,
		"--same-node-ok", "--start-lead", nodeStartLead, "--target-wait", "90s", "--run-id", "cost"}, extra...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+n.Kubeconfig)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	c := &costRun{ns: ns}
	var samples []cgSample
	pods := map[string]bool{}
	var wrong *wrongWatch
	var runErr error
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	cg := ""
loop:
	for {
		select {
		case runErr = <-exited:
			break loop
		case <-tick.C:
		}
		l, err := n.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		for _, p := range l.Items {
			if p.Status.Phase == "Running" {
				pods[p.Name] = true
				if p.Labels[k8s.LabelName] == k8s.TargetName && !slices.Contains(c.targetPods, p.Name) {
					c.targetPods = append(c.targetPods, p.Name)
				}
			}
			if cg == "" && p.Labels[k8s.LabelName] == k8s.TargetName && p.Status.Phase == "Running" {
				cg = podCgroup(t, string(p.UID))
			}
		}
		if cg != "" {
			if s, ok := readCgroup(cg); ok {
				samples = append(samples, s)
			}
		}
		// The namespace's pods from metrics.k8s.io, over the load.
		if len(extra) == 0 && wrong == nil {
			if job, err := n.Client.BatchV1().Jobs(ns).Get(ctx, k8s.JobName("cost", 0), metav1.GetOptions{}); err == nil {
				wrong = startWrongPodMetrics(t, n, ns, job, costWarmup, costDuration)
			}
		}
	}
	if runErr != nil {
		t.Fatalf("k8s run: %v\n%s", runErr, out.String())
	}
	_, steps, err := store.ReadSweep(dir)
	if err != nil || len(steps) != 1 || steps[0].Run == nil {
		t.Fatalf("steps %v %v\n%s", steps, err, out.String())
	}
	c.step = steps[0]
	for p := range pods {
		c.pods = append(c.pods, p)
	}
	run := c.step.Run
	cores, mem, ok := truth(samples, run.Start, run.End)
	if !ok {
		t.Fatalf("%d cgroup samples of %s do not span the window %v–%v", len(samples), cg, run.Start, run.End)
	}
	c.truthCores, c.truthMem, c.samples = cores, mem, samples
	if wrong != nil {
		if c.wrongPodMetrics, err = wrong.stop(); err != nil {
			t.Fatal(err)
		}
	}
	noneLeftOn(t, n.Client, ns)
	return c
}

type cgSample struct {
	at    time.Time
	usage float64 // CPU seconds
	ws    float64 // bytes
}

// podCgroup is the pod's cgroup directory under the kubelet's cgroup root
// (BestEffort: the target asks for no resources), in the cpuacct
// hierarchy; the memory one has the same path.
func podCgroup(t *testing.T, uid string) string {
	t.Helper()
	for _, qos := range []string{"besteffort", "burstable", ""} {
		d := filepath.Join("/sys/fs/cgroup/cpuacct", node.CgroupRoot, "kubepods", qos, "pod"+uid)
		if _, err := os.Stat(d); err == nil {
			return strings.TrimPrefix(d, "/sys/fs/cgroup/cpuacct")
		}
	}
	t.Fatalf("no cgroup for pod %s under /sys/fs/cgroup/cpuacct/%s/kubepods", uid, node.CgroupRoot)
	return ""
}

func readCgroup(cg string) (cgSample, bool) {
	at := time.Now()
	b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/cpuacct", cg, "cpuacct.usage"))
	if err != nil {
		return cgSample{}, false
	}
	ns, err := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
	if err != nil {
		return cgSample{}, false
	}
	s := cgSample{at: at, usage: ns / 1e9}
	if b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/memory", cg, "memory.usage_in_bytes")); err == nil {
		u, _ := strconv.ParseFloat(strings.TrimSpace(string(b)), 64)
		inactive := 0.0
		if st, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/memory", cg, "memory.stat")); err == nil {
			for _, l := range strings.Split(string(st), "\n") {
				if f := strings.Fields(l); len(f) == 2 && f[0] == "total_inactive_file" {
					inactive, _ = strconv.ParseFloat(f[1], 64)
				}
			}
		}
		s.ws = max(0, u-inactive)
	}
	return s, true
}

// truth is the cgroup's CPU cores over [from, to] (its counter at both
// ends, each read between its two nearest samples) and the working set's
// mean over the samples within.
func truth(ss []cgSample, from, to time.Time) (float64, float64, bool) {
	at := func(t time.Time) (float64, bool) {
		for i := 1; i < len(ss); i++ {
			if !ss[i].at.Before(t) && !ss[i-1].at.After(t) {
				a, b := ss[i-1], ss[i]
				f := float64(t.Sub(a.at)) / float64(b.at.Sub(a.at))
				return a.usage + f*(b.usage-a.usage), true
			}
		}
		return 0, false
	}
	u0, ok0 := at(from)
	u1, ok1 := at(to)
	if !ok0 || !ok1 {
		return 0, 0, false
	}
	var ws float64
	var n int
	for _, s := range ss {
		if !s.at.Before(from) && !s.at.After(to) {
			ws += s.ws
			n++
		}
	}
	return (u1 - u0) / to.Sub(from).Seconds(), ws / float64(max(1, n)), true
}

// wrongWatch reads metrics.k8s.io for every pod of the namespace (the
// workers with the target) over the step's load: what a cost query that
// ignores the watch's selector would count.
type wrongWatch struct {
	stop func() (results.ProcessCost, error)
}

// startWrongPodMetrics starts once the step's Job exists: its workers'
// start instant gives the load's window, as the coordinator computes it.
func startWrongPodMetrics(t *testing.T, n *node.Node, ns string, job *batchv1.Job, warmup, duration time.Duration) *wrongWatch {
	t.Helper()
	var startAt time.Time
	args := job.Spec.Template.Spec.Containers[0].Args
	for i, a := range args {
		if a == "--start-at" && i+1 < len(args) {
			startAt, _ = time.Parse(time.RFC3339Nano, args[i+1])
		}
	}
	if startAt.IsZero() {
		t.Fatalf("the Job's worker has no --start-at: %v", args)
	}
	c, err := k8scluster.ConnectConfig(context.Background(), n.RESTConfig, "node")
	if err != nil {
		t.Fatal(err)
	}
	pm, err := cost.NewPodMetrics(c)
	if err != nil {
		t.Fatal(err)
	}
	w := cost.Watch{Name: "target", Role: "target", Namespace: ns, Selector: k8s.Selector("")}
	win := cost.Window{From: startAt.Add(time.Second), To: startAt.Add(warmup + duration), Measured: duration}
	stop, err := pm.Start(context.Background(), w, win)
	if err != nil {
		t.Fatal(err)
	}
	return &wrongWatch{stop: stop}
}
