package run

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
	"loadgen/meshes/k8s/cost"
	"loadgen/meshes/k8s/worker"
	"loadgen/results"
	"loadgen/results/merge"
)

// runStepOnTime runs a step, and again (up to StartRetries times) while
// it fails only because workers started late: each time with twice the
// start lead, once the earlier run's worker pods are gone (the cost
// watches and the placement select a step's pods by its label). A busy
// cluster then slows a sweep down instead of failing its steps.
func (k *Coordinator) runStepOnTime(ctx context.Context, st k8s.Step, addr k8s.Addresses, off worker.Offset) (*results.Step, []merge.Worker) {
	runStep := k.runStep
	if k.stepRunner != nil {
		runStep = k.stepRunner
	}
	res, workers, late := runStep(ctx, st, addr, off, 0)
	for attempt := 1; late && attempt <= k.StartRetries && ctx.Err() == nil; attempt++ {
		if err := k.waitStepPodsGone(ctx, st.Index); err != nil {
			res.Failed += "; not run again: " + err.Error()
			break
		}
		k.StartLead *= 2
		k.say("step %s: workers started late (%s); running it again with a %v start lead, which the steps after it keep (--start-lead)",
			st.ID, res.Failed, k.StartLead)
		res, workers, late = runStep(ctx, st, addr, off, attempt)
	}
	return res, workers
}

// waitStepPodsGone waits until no worker pod of the step is left (a
// deleted Job's pods go after it), for up to two minutes.
func (k *Coordinator) waitStepPodsGone(parent context.Context, step int) error {
	ctx, cancel := context.WithTimeout(parent, 2*time.Minute)
	defer cancel()
	sel := k8s.StepSelector(k.Options.RunID, step)
	for {
		l, err := k.Cluster.Client.CoreV1().Pods(k.Options.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err == nil && len(l.Items) == 0 {
			return nil
		}
		if !worker.Sleep(ctx, k.Poll) {
			if parent.Err() != nil {
				return parent.Err()
			}
			if err != nil {
				return k.Cluster.Errorf("list the step's worker pods: %v", cluster.OneLine(err))
			}
			return fmt.Errorf("%d worker pods of the late run were still there 2m after its Job was deleted (kubectl get pods -n %s -l %s)",
				len(l.Items), k.Options.Namespace, sel)
		}
	}
}

// runStep runs one step as an Indexed Job and merges its workers; attempt
// counts its runs again after workers started late (a Job of its own
// each). late: the step failed only because workers started late.
func (k *Coordinator) runStep(ctx context.Context, st k8s.Step, addr k8s.Addresses, off worker.Offset, attempt int) (res *results.Step, _ []merge.Worker, late bool) {
	o := k.Options
	res = newStep(st)
	if !k8s.DirectPort(port(st.URL)) {
		res.Workers = k.ingressWorkers(ctx) // the report's sizing table
	}
	for i := range k.Workers {
		if _, err := worker.ShareOf(st.Connections, st.Threads, st.Rate, k.Workers, i); err != nil {
			res.Failed = err.Error()
			return res, nil, false
		}
	}
	args, err := o.RunArgs(k.Load, st, addr)
	if err != nil {
		res.Failed = err.Error()
		return res, nil, false
	}
	// The start instant on the API server's clock; each worker converts it
	// to its own with its measured offset.
	startAt := time.Now().Add(off.Offset).Add(k.StartLead).Round(time.Millisecond)
	localStart := startAt.Add(-off.Offset)
	measured := k.Load.Warmup + k.Load.Duration
	grace := k.Load.Timeout + 30*time.Second
	name := k8s.JobName(o.RunID, st.Index)
	if attempt > 0 {
		name += fmt.Sprintf("-a%d", attempt)
	}
	spec := k8s.JobSpec{Name: name, Workers: k.Workers, StartAt: startAt, MaxLate: k.MaxLate,
		Connections: st.Connections, Threads: st.Threads, Rate: st.Rate, RunArgs: args, Index: st.Index, Direct: k8s.DirectURL(st.URL),
		Deadline: k.StartLead + measured + grace, AwayFrom: k.awayFrom(), Version: k.Version, ClientCert: st.ClientCert != ""}
	job := o.Job(spec)
	created, err := k.Cluster.Client.BatchV1().Jobs(o.Namespace).Create(ctx, job, metav1.CreateOptions{FieldValidation: "Strict"})
	if err != nil {
		res.Failed = k.Cluster.Errorf("create Job %s: %v", job.Name, cluster.OneLine(err)).Error()
		return res, nil, false
	}
	defer k.deleteJob(ctx, created.Name)

	costs := make(chan []results.ProcessCost, 1)
	collected := make(chan struct{})
	go func() { costs <- k.sampleWindow(ctx, st.Index, localStart, loadWindow(localStart, k.Load), collected) }()
	// A worker not running 10 s after the start instant (the kubelet's
	// status takes a moment to reach the API server) can only be late.
	startBy := localStart.Add(k.MaxLate + 10*time.Second)
	outcomes := worker.Collect(ctx, k.Cluster, worker.Collection{Job: created, Workers: k.Workers, StartBy: startBy,
		Deadline: localStart.Add(measured + grace), Check: k.workerCheck(spec.Direct), Poll: k.Poll})
	close(collected)
	watched := <-costs
	res.Cluster = k.placement(ctx, st.Index, created)
	if res.Cluster != nil {
		res.Cluster.StartRetries, res.Cluster.StartLead = attempt, k.StartLead.Seconds()
	}

	var fails []string
	var in []merge.Input
	late = true // every failure, if any, a worker that started late
	for _, w := range outcomes {
		switch {
		case w.Mismatch:
			k.mismatch = w.Failed
			fails = append(fails, w.Failed)
			late = false
		case w.Failed != "":
			fails = append(fails, w.Failed+scheduleHint(w.Failed, o))
			late = late && (w.Late > k.MaxLate || w.Starting)
		case time.Duration(w.Report.Late) > k.MaxLate:
			fails = append(fails, fmt.Sprintf("worker %d (pod %s) started %v late (the limit is %v)", w.Index, w.Pod, w.Report.Late, k.MaxLate))
		default:
			in = append(in, merge.Input{Source: w.Pod, Run: w.Report.Run})
		}
	}
	if ctx.Err() != nil && len(fails) > 0 {
		fails = append([]string{"interrupted"}, fails...)
	}
	if len(fails) > 0 {
		res.Failed = strings.Join(fails, "; ")
		return res, nil, late && ctx.Err() == nil
	}
	// A worker may start up to MaxLate after the others (refused past
	// it): its window then overlaps theirs by less than merge's 90%, which
	// the step allows and notes.
	run, workers, err := merge.RunsWith(in, merge.Options{AllowSkew: true})
	if err != nil {
		res.Failed = err.Error()
		return res, nil, false
	}
	for i := range workers {
		r := outcomes[i].Report
		workers[i].Index = r.Index
		workers[i].ClockOffset, workers[i].OffsetError, workers[i].Late = r.ClockOffset, r.OffsetError, r.Late
	}
	res.Run = run
	if rps := run.Summary.RPS; rps > 0 {
		for i := range watched {
			if watched[i].Unmeasured != "" || watched[i].NoProxy != "" {
				continue
			}
			watched[i].CPUPer1kRPS = watched[i].CPUMean / (rps / 1000)
			watched[i].MiBPer1kRPS = float64(watched[i].MemMean) / (1 << 20) / (rps / 1000)
		}
	}
	res.Watched = watched
	return res, workers, false
}

// newStep is a step's record, before it has run.
func newStep(st k8s.Step) *results.Step {
	return &results.Step{Schema: results.SchemaVersion, Tool: "loadgen", Index: st.Index, ID: st.ID, Path: st.Path,
		Baseline: st.Baseline, Rung: fmt.Sprintf("c%dt%d", st.Connections, st.Threads), Connections: st.Connections,
		Threads: st.Threads, Payload: st.Payload, Rate: st.Rate, Repeat: st.Repeat}
}

// ingressWorkers reads, at each step, the worker-processes the ingress
// controller runs with: what a step records is what ran, not what was
// rendered (0: not known, said once).
func (k *Coordinator) ingressWorkers(ctx context.Context) int {
	o := k.Options
	if o.Mesh != k8s.MeshIngressNginx {
		return 0
	}
	cm, err := k.Cluster.Client.CoreV1().ConfigMaps(o.IngressNamespace).Get(ctx, k8s.IngressControllerConfigMap, metav1.GetOptions{})
	if err != nil {
		k.sayOnce("ingress-nginx: cannot read ConfigMap %s/%s (%v): steps record no worker-processes", o.IngressNamespace, k8s.IngressControllerConfigMap, cluster.OneLine(err))
		return 0
	}
	n, err := strconv.Atoi(cm.Data["worker-processes"])
	if err != nil || n < 1 {
		k.sayOnce("ingress-nginx: worker-processes is %q: \"auto\" counts the node's cores, not the pod's limit (ingress-nginx#2948); "+
			"--configure-controller --worker-processes N sets it for the run and puts it back", cm.Data["worker-processes"])
		return 0
	}
	return n
}

// port is a URL's port, 0 when it has none.
func port(raw string) int {
	u, err := url.Parse(raw)
	if err != nil {
		return 0
	}
	p, _ := strconv.Atoi(u.Port())
	return p
}

// sampleWindow records every watch of the step over its load: each
// watcher starts when the load does and stops once the workers are
// collected (a source publishes its last measurement of the load a little
// after it). A side without a sidecar in the mode is recorded as such.
func (k *Coordinator) sampleWindow(ctx context.Context, step int, start time.Time, win cost.Window, collected <-chan struct{}) []results.ProcessCost {
	if k.Watcher == nil {
		return nil
	}
	ws, none := Watches(k.Options, step)
	if note := k8s.ControlPlaneNote(k.Options); note != "" {
		k.sayOnce("%s", note)
	}
	if !worker.Sleep(ctx, time.Until(start)) {
		return nil
	}
	type running struct {
		w    cost.Watch
		stop func() (results.ProcessCost, error)
	}
	var rs []running
	ws = k.stepWatches(ws)
	if !k.Options.NoNodeCost {
		// The workers are scheduled by now: the nodes of the step's pods.
		for _, n := range k.stepNodes(ctx, step) {
			ws = append(ws, cost.NodeWatch(n))
		}
	}
	for _, w := range ws {
		stop, err := k.Watcher.Start(ctx, w, win)
		if err != nil {
			k.say("watch %s: %v", w.Name, err)
			continue
		}
		rs = append(rs, running{w, stop})
	}
	worker.Sleep(ctx, time.Until(win.To))
	select {
	case <-collected:
	case <-ctx.Done():
	}
	out := slices.Clone(none)
	for _, r := range rs {
		c, err := r.stop()
		if err != nil {
			k.say("watch %s: %v", r.w.Name, err)
			continue
		}
		if c.Unmeasured != "" {
			hint := ""
			if r.w.Role == RoleControlPlane && c.Processes == 0 {
				hint = " (say where the control plane runs with --control-plane NAMESPACE/SELECTOR, or --control-plane none)"
			}
			k.say("watch %s: %s%s", r.w.Name, c.Unmeasured, hint)
		}
		out = append(out, c)
	}
	return out
}

// loadWindow is the part of a step's load its cost figures are made of:
// from a second after the load began (the workers connected before it)
// to its end.
func loadWindow(start time.Time, l k8s.Load) cost.Window {
	load := l.Warmup + l.Duration
	return cost.Window{From: start.Add(min(time.Second, load/4)), To: start.Add(load), Measured: l.Duration}
}

// deleteJob deletes a step's Job and its pods, even after Ctrl-C.
func (k *Coordinator) deleteJob(ctx context.Context, name string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	bg := metav1.DeletePropagationBackground
	_ = k.Cluster.Client.BatchV1().Jobs(k.Options.Namespace).Delete(cctx, name, metav1.DeleteOptions{PropagationPolicy: &bg})
}

// waitTarget waits for the target to be ready and, behind an ingress or a
// gateway, for its address — when a step loads the target at all.
func (k *Coordinator) waitTarget(ctx context.Context) (k8s.Addresses, error) {
	if !k.usesTarget() {
		return k8s.Addresses{}, nil
	}
	o := k.Options
	ctx, cancel := context.WithTimeout(ctx, k.TargetWait)
	defer cancel()
	for _, name := range o.TargetNames() {
		for {
			d, err := k.Cluster.Client.AppsV1().Deployments(o.Namespace).Get(ctx, name, metav1.GetOptions{})
			if err == nil && ready(d) {
				break
			}
			if !worker.Sleep(ctx, 2*time.Second) {
				return k8s.Addresses{}, fmt.Errorf("the target (Deployment %s/%s) was not ready within %v%s",
					o.Namespace, name, k.TargetWait, k.targetReason(context.WithoutCancel(ctx)))
			}
		}
	}
	if !o.Published() {
		return k8s.Addresses{}, nil
	}
	if o.Mesh == k8s.MeshGateway {
		if err := k.checkGateway(ctx); err != nil {
			return k8s.Addresses{}, err
		}
	}
	return k.waitAddresses(ctx)
}

// targetReason says why the target's pods are not ready: each pod's
// state and its latest warnings (a failed readiness probe, a failed pull).
func (k *Coordinator) targetReason(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	o := k.Options
	l, err := k.Cluster.Client.CoreV1().Pods(o.Namespace).List(ctx, metav1.ListOptions{LabelSelector: o.TargetSelector()})
	if err != nil || len(l.Items) == 0 {
		return fmt.Sprintf(": no pod of it exists (see `kubectl -n %s describe deployment %s`)", o.Namespace, k8s.TargetName)
	}
	var out []string
	for i := range l.Items {
		p := &l.Items[i]
		out = append(out, fmt.Sprintf("pod %s: %s%s", p.Name, cluster.PodReason(p), k.Cluster.PodEvents(ctx, p)))
	}
	return ": " + strings.Join(out, "; ")
}

func ready(d *appsv1.Deployment) bool {
	return d.Status.ReadyReplicas >= 1 && d.Status.ObservedGeneration >= d.Generation
}
