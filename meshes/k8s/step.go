package k8s

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"loadgen/results"
	"loadgen/results/merge"
)

// runStep runs one step as an Indexed Job and merges its workers.
func (k *Coordinator) runStep(ctx context.Context, st Step, addr string, off Offset) (*results.Step, []merge.Worker) {
	o := k.Options
	res := &results.Step{Schema: results.SchemaVersion, Tool: "loadgen", Index: st.Index, ID: st.ID, Path: st.Path,
		Baseline: st.Baseline, Rung: fmt.Sprintf("c%dt%d", st.Connections, st.Threads), Connections: st.Connections,
		Threads: st.Threads, Payload: st.Payload, Rate: st.Rate, Repeat: st.Repeat}
	if port(st.URL) != PortHTTPDirect {
		res.Workers = k.proxyWorkers // the report's sizing table
	}
	for i := range k.Workers {
		if _, err := ShareOf(st.Connections, st.Threads, st.Rate, k.Workers, i); err != nil {
			res.Failed = err.Error()
			return res, nil
		}
	}
	args, err := o.runArgs(k.Load, st, addr)
	if err != nil {
		res.Failed = err.Error()
		return res, nil
	}
	// The start instant on the API server's clock; each worker converts it
	// to its own with its measured offset.
	startAt := time.Now().Add(off.Offset).Add(k.StartLead).Round(time.Millisecond)
	localStart := startAt.Add(-off.Offset)
	measured := k.Load.Warmup + k.Load.Duration
	grace := k.Load.Timeout + 30*time.Second
	spec := JobSpec{Name: JobName(o.RunID, st.Index), Workers: k.Workers, StartAt: startAt, MaxLate: k.MaxLate,
		Connections: st.Connections, Threads: st.Threads, Rate: st.Rate, RunArgs: args, Index: st.Index,
		Deadline: k.StartLead + measured + grace}
	job := o.Job(spec)
	created, err := k.Cluster.Client.BatchV1().Jobs(o.Namespace).Create(ctx, job, metav1.CreateOptions{FieldValidation: "Strict"})
	if err != nil {
		res.Failed = k.Cluster.errorf("create Job %s: %v", job.Name, oneLine(err)).Error()
		return res, nil
	}
	defer k.deleteJob(ctx, created.Name)

	costs := make(chan []results.ProcessCost, 1)
	go func() { costs <- k.sampleWindow(ctx, localStart.Add(k.Load.Warmup), localStart.Add(measured)) }()
	outcomes := k.Cluster.collect(ctx, created, k.Workers, localStart.Add(measured+grace), k.Poll)
	watched := <-costs

	var fails []string
	var in []merge.Input
	for _, w := range outcomes {
		switch {
		case w.failed != "":
			fails = append(fails, w.failed)
		case time.Duration(w.report.Late) > k.MaxLate:
			fails = append(fails, fmt.Sprintf("worker %d (pod %s) started %v late (the limit is %v)", w.index, w.pod, w.report.Late, k.MaxLate))
		default:
			in = append(in, merge.Input{Source: w.pod, Run: w.report.Run})
		}
	}
	if ctx.Err() != nil && len(fails) > 0 {
		fails = append([]string{"interrupted"}, fails...)
	}
	if len(fails) > 0 {
		res.Failed = strings.Join(fails, "; ")
		return res, nil
	}
	run, workers, err := merge.Runs(in)
	if err != nil {
		res.Failed = err.Error()
		return res, nil
	}
	for i := range workers {
		r := outcomes[i].report
		workers[i].Index = r.Index
		workers[i].ClockOffset, workers[i].OffsetError, workers[i].Late = r.ClockOffset, r.OffsetError, r.Late
	}
	res.Run = run
	if rps := run.Summary.RPS; rps > 0 {
		for i := range watched {
			watched[i].CPUPer1kRPS = watched[i].CPUMean / (rps / 1000)
			watched[i].MiBPer1kRPS = float64(watched[i].MemMean) / (1 << 20) / (rps / 1000)
		}
	}
	res.Watched = watched
	return res, workers
}

// ingressWorkers reads the worker-processes the ingress controller runs
// with (its ConfigMap is read, never changed): what a step records is what
// ran, not what was rendered.
func (k *Coordinator) ingressWorkers(ctx context.Context) {
	o := k.Options
	if o.Mesh != MeshIngressNginx {
		return
	}
	cm, err := k.Cluster.Client.CoreV1().ConfigMaps(o.IngressNamespace).Get(ctx, ingressControllerConfigMap, metav1.GetOptions{})
	if err != nil {
		k.say("ingress-nginx: cannot read ConfigMap %s/%s (%v): steps record no worker-processes", o.IngressNamespace, ingressControllerConfigMap, oneLine(err))
		return
	}
	n, err := strconv.Atoi(cm.Data["worker-processes"])
	if err != nil || n < 1 {
		k.say("ingress-nginx: worker-processes is %q: \"auto\" counts the node's cores, not the pod's limit (ingress-nginx#2948); "+
			"set it with the ConfigMap `loadgen k8s render --mesh ingress-nginx --worker-processes N` prints", cm.Data["worker-processes"])
		return
	}
	k.proxyWorkers = n
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

// sampleWindow records every watch from the window's start to its end,
// less the last second (as local sweeps do).
func (k *Coordinator) sampleWindow(ctx context.Context, from, to time.Time) []results.ProcessCost {
	if k.Watcher == nil {
		return nil
	}
	if !sleepCtx(ctx, time.Until(from)) {
		return nil
	}
	type running struct {
		w    Watch
		stop func() (results.ProcessCost, error)
	}
	var rs []running
	for _, w := range k.Options.Watches() {
		stop, err := k.Watcher.Start(ctx, w)
		if err != nil {
			k.say("watch %s: %v", w.Name, err)
			continue
		}
		rs = append(rs, running{w, stop})
	}
	trim := min(time.Second, to.Sub(from)/4)
	sleepCtx(ctx, time.Until(to.Add(-trim)))
	var out []results.ProcessCost
	for _, r := range rs {
		c, err := r.stop()
		if err != nil {
			k.say("watch %s: %v", r.w.Name, err)
			continue
		}
		out = append(out, c)
	}
	return out
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
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
func (k *Coordinator) waitTarget(ctx context.Context) (string, error) {
	if !k.usesTarget() {
		return "", nil
	}
	o := k.Options
	ctx, cancel := context.WithTimeout(ctx, k.TargetWait)
	defer cancel()
	for {
		d, err := k.Cluster.Client.AppsV1().Deployments(o.Namespace).Get(ctx, TargetName, metav1.GetOptions{})
		if err == nil && ready(d) {
			break
		}
		if !sleepCtx(ctx, 2*time.Second) {
			return "", fmt.Errorf("the target (Deployment %s/%s) was not ready within %v: see `kubectl -n %s describe pod -l %s=%s`",
				o.Namespace, TargetName, k.TargetWait, o.Namespace, LabelName, TargetName)
		}
	}
	var gvk schema.GroupVersionKind
	var name string
	switch o.Mesh {
	case MeshGateway:
		gvk, name = schema.GroupVersionKind{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "Gateway"}, GatewayName
	case MeshIngressNginx:
		gvk, name = schema.GroupVersionKind{Group: "networking.k8s.io", Version: "v1", Kind: "Ingress"}, TargetName
	default:
		return "", nil
	}
	for {
		if addr := k.address(ctx, gvk, name); addr != "" {
			k.say("%s %s answers at %s", gvk.Kind, name, addr)
			return addr, nil
		}
		if !sleepCtx(ctx, 2*time.Second) {
			return "", fmt.Errorf("%s %s/%s got no address within %v: is its controller running (class %s)?", gvk.Kind, o.Namespace, name, k.TargetWait, o.Class)
		}
	}
}

func ready(d *appsv1.Deployment) bool {
	return d.Status.ReadyReplicas >= 1 && d.Status.ObservedGeneration >= d.Generation
}

// address reads a Gateway's status.addresses or an Ingress's load balancer.
func (k *Coordinator) address(ctx context.Context, gvk schema.GroupVersionKind, name string) string {
	ri, _, err := k.Cluster.resource(gvk, k.Options.Namespace)
	if err != nil {
		return ""
	}
	u, err := ri.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	st, _ := u.Object["status"].(map[string]any)
	if gvk.Kind == "Gateway" {
		as, _ := st["addresses"].([]any)
		for _, a := range as {
			if m, ok := a.(map[string]any); ok {
				if v, ok := m["value"].(string); ok && v != "" {
					return v
				}
			}
		}
		return ""
	}
	lb, _ := st["loadBalancer"].(map[string]any)
	ings, _ := lb["ingress"].([]any)
	for _, i := range ings {
		if m, ok := i.(map[string]any); ok {
			for _, key := range []string{"ip", "hostname"} {
				if v, ok := m[key].(string); ok && v != "" {
					return v
				}
			}
		}
	}
	return ""
}
