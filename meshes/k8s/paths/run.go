package paths

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
	"loadgen/meshes/k8s/worker"
	"loadgen/results"
	"loadgen/results/store"
)

// Runner runs `loadgen k8s paths` on a cluster: it reads the schedulable
// nodes, applies the servers and Services in a namespace it creates, runs
// each measurement as a Job of one worker, one at a time, writes each
// test's results directory (loadgen sweep's layout: `loadgen report`
// reads them) and paths.json, and deletes everything it created — after
// Ctrl-C or a failure too.
type Runner struct {
	Cluster *cluster.Cluster
	Options Options
	Dir     string
	// Env is the machine that coordinates, for the results directories'
	// manifests (the CLI's loadgen.Environment()).
	Env    results.Env
	Events func(format string, args ...any) // progress for people
	// Poll is how often a client pod is looked at (default 500 ms).
	Poll time.Duration
	// ServerWait bounds the wait for the servers and their Services'
	// endpoints (default 3 min).
	ServerWait time.Duration
}

func (r *Runner) say(format string, args ...any) {
	if r.Events != nil {
		r.Events(format, args...)
	}
}

// Run measures every path × test and returns the table, written to
// Dir/paths.json. Interrupted (ctx), it stops after the current
// measurement and returns the table so far with ctx's error.
func (r *Runner) Run(ctx context.Context) (table *Table, err error) {
	o, err := r.Options.withDefaults()
	if err != nil {
		return nil, err
	}
	if r.Poll == 0 {
		r.Poll = 500 * time.Millisecond
	}
	if r.ServerWait == 0 {
		r.ServerWait = 3 * time.Minute
	}
	c := r.Cluster
	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, c.Errorf("list nodes: %v", cluster.OneLine(err))
	}
	plan, err := NewPlan(o, nodes.Items)
	if err != nil {
		return nil, c.Errorf("%v", err)
	}
	flannel, ferr := FlannelBackend(nodes.Items, plan.Nodes)
	if o.FlannelBackend != "" && (ferr != nil || flannel != o.FlannelBackend) {
		why := "runs " + flannel
		switch {
		case ferr != nil:
			why = ferr.Error()
		case flannel == "":
			why = "runs no Flannel (no node has the " + FlannelBackendAnnotation + " annotation)"
		}
		return nil, c.Errorf("the cluster %s, not Flannel's %s backend: switch its backend and run again", why, o.FlannelBackend)
	}
	r.say("nodes: servers on %s; schedulable: %v", plan.ServerNode, plan.Nodes)
	for _, p := range plan.Paths {
		if !p.Measurable() {
			r.say("%s: %s (%s)", p.Name, p.NotMeasurable, plan.ServerNode)
		}
	}
	if err := c.CheckNamespace(ctx, o.Namespace); err != nil {
		return nil, err
	}
	if err := r.prepareDir(); err != nil {
		return nil, err
	}
	defer func() {
		if cerr := r.cleanup(ctx, o); cerr != nil {
			err = errors.Join(err, fmt.Errorf("cleanup: %w (run `loadgen k8s cleanup -n %s`)", cerr, o.Namespace))
		}
	}()
	objs, err := k8s.ToUnstructured(plan.Objects()...)
	if err != nil {
		return nil, err
	}
	if err := c.Apply(ctx, objs); err != nil {
		return nil, err
	}
	r.say("applied %d objects (run %s) in namespace %s", len(objs), o.RunID, o.Namespace)
	ep, err := r.waitServers(ctx, o.Namespace)
	if err != nil {
		return nil, err
	}
	r.say("servers ready: node IP %s, pod IP %s, ClusterIP %s, NodePorts tcp %d http %d udp %d", ep.NodeIP, ep.PodIP, ep.ClusterIP, ep.NodePortTCP, ep.NodePortHTTP, ep.NodePortUDP)
	table = &Table{Schema: 1, Tool: "loadgen", Kind: Kind, Created: time.Now().UTC(), Context: c.Context, Server: c.Host,
		Namespace: o.Namespace, RunID: o.RunID, Image: o.Image, DurationSeconds: o.Duration.Seconds(), Repeats: o.Repeats,
		Tolerance: o.Tolerance, Judge: o.Judge, MessageSize: MessageSize, StreamSize: o.StreamSize, HTTPConnections: HTTPConnections,
		Nodes: Nodes{Schedulable: plan.Nodes, Server: plan.ServerNode, Other: plan.OtherNode}, Flannel: flannel, CNI: o.CNI}
	table.KubeProxy = KubeProxyMode(ctx, c, plan.ServerNode)
	if table.KubeProxy.Mode == ProxyModeUnknown {
		r.say("kube-proxy mode: unknown: %s", table.KubeProxy.Why)
	} else {
		r.say("kube-proxy mode: %s (from %s)", table.KubeProxy.Mode, table.KubeProxy.Source)
	}
	if err := r.writeManifests(plan, ep, table.Created); err != nil {
		return nil, err
	}
	ms := plan.Measurements()
	var samples []Sample
	for _, m := range ms {
		if ctx.Err() != nil {
			break
		}
		st := r.measure(ctx, plan, m, ep)
		if ctx.Err() != nil {
			break // cut short: not a sample
		}
		if err := store.WriteJSON(filepath.Join(r.Dir, m.Test.Name, store.StepsDir, m.ID()+".json"), st); err != nil {
			return table, err
		}
		s := SampleOf(m, st)
		if s.Failed == "" {
			r.say("%d/%d repeat %d %s %s: %s %s", m.Index+1, len(ms), m.Repeat, m.Test.Name, m.Path.Name, figure(s.Figure, m.Test.Unit), m.Test.Unit)
		} else {
			r.say("%d/%d repeat %d %s %s failed: %s", m.Index+1, len(ms), m.Repeat, m.Test.Name, m.Path.Name, s.Failed)
		}
		samples = append(samples, s)
	}
	table.Rows = Tabulate(plan, samples)
	table.Interrupted = ctx.Err() != nil
	table.Passed = !table.Interrupted && Passed(table.Rows)
	if err := WriteTable(r.Dir, table); err != nil {
		return table, err
	}
	return table, ctx.Err()
}

// prepareDir makes the results directory: a new one, or an empty one.
func (r *Runner) prepareDir() error {
	if r.Dir == "" {
		return errors.New("no results directory")
	}
	if entries, err := os.ReadDir(r.Dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s already holds results: choose another -o", r.Dir)
	}
	for _, t := range Tests {
		if !r.Options.Runs(t) {
			continue
		}
		if err := os.MkdirAll(filepath.Join(r.Dir, t.Name, store.StepsDir), 0o755); err != nil {
			return fmt.Errorf("results directory: %w", err)
		}
	}
	return nil
}

// pathsSpec is a test's sweep as its manifest records it (the fields of
// loadgen/sweep.Spec that reports read).
type pathsSpec struct {
	Paths []struct {
		Name     string `json:"name"`
		URL      string `json:"url"`
		Baseline bool   `json:"baseline,omitempty"`
	} `json:"paths"`
	Ladder   []string `json:"ladder"`
	Payloads []int    `json:"payloads"`
	Protocol string   `json:"protocol"`
	Endpoint string   `json:"endpoint,omitempty"`
	Duration string   `json:"duration"`
	Repeats  int      `json:"repeats"`
}

// writeManifests writes each test's results directory's manifest: its
// paths (the measurable ones) with the addresses they dial, and its steps.
func (r *Runner) writeManifests(p *Plan, ep Endpoints, created time.Time) error {
	ms := p.Measurements()
	for _, t := range p.Tests {
		sp := pathsSpec{Ladder: []string{t.Rung()}, Payloads: []int{p.Size(t)}, Protocol: t.Protocol,
			Duration: p.Options.Duration.String(), Repeats: p.Options.Repeats}
		if t.Name == TestHTTP || t.Name == TestMTLS {
			sp.Endpoint = HTTPEndpoint
		}
		m := results.Manifest{Schema: results.SchemaVersion, Tool: "loadgen", Kind: "sweep", Created: created,
			Baseline: p.BaselinePath(), Env: r.Env}
		for _, path := range p.Paths {
			if !path.Measurable() {
				continue
			}
			url := p.Target(Measurement{Path: path, Test: t}, ep)
			sp.Paths = append(sp.Paths, struct {
				Name     string `json:"name"`
				URL      string `json:"url"`
				Baseline bool   `json:"baseline,omitempty"`
			}{path.Name, url, path.Name == p.BaselinePath()})
			m.Paths = append(m.Paths, path.Name)
		}
		for _, x := range ms {
			if x.Test.Name == t.Name {
				m.Steps = append(m.Steps, x.ID())
			}
		}
		b, err := json.Marshal(sp)
		if err != nil {
			return err
		}
		m.Spec = b
		if err := store.WriteJSON(filepath.Join(r.Dir, t.Name, store.ManifestFile), m); err != nil {
			return err
		}
	}
	return nil
}

// measure runs one measurement's client Job and reads its worker's result.
func (r *Runner) measure(ctx context.Context, p *Plan, m Measurement, ep Endpoints) *results.Step {
	st := &results.Step{Schema: results.SchemaVersion, Tool: "loadgen", Index: m.Index, ID: m.ID(), Path: m.Path.Name,
		Baseline: m.Path.Name == p.BaselinePath(), Rung: m.Test.Rung(), Connections: m.Test.Connections, Threads: m.Test.Threads,
		Payload: m.size(), Repeat: m.Repeat}
	c := r.Cluster
	job := p.ClientJob(m, ep)
	created, err := c.Client.BatchV1().Jobs(job.Namespace).Create(ctx, job, metav1.CreateOptions{FieldValidation: "Strict"})
	if err != nil {
		st.Failed = c.Errorf("create Job %s: %v", job.Name, cluster.OneLine(err)).Error()
		return st
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		bg := metav1.DeletePropagationBackground
		_ = c.Client.BatchV1().Jobs(created.Namespace).Delete(cctx, created.Name, metav1.DeleteOptions{PropagationPolicy: &bg})
	}()
	deadline := time.Now().Add(p.Options.Duration + jobGrace + 30*time.Second)
	w := worker.Collect(ctx, c, worker.Collection{Job: created, Workers: 1, Deadline: deadline, Poll: r.Poll})[0]
	if w.Failed != "" {
		st.Failed = w.Failed
		return st
	}
	st.Run = w.Report.Run
	return st
}

// waitServers waits for both servers to be ready and both Services to
// have the pod as a ready endpoint, and reads their addresses.
func (r *Runner) waitServers(ctx context.Context, ns string) (Endpoints, error) {
	c := r.Cluster
	ctx, cancel := context.WithTimeout(ctx, r.ServerWait)
	defer cancel()
	var why string
	for {
		ep, done, w, err := r.serversReady(ctx, ns)
		if err != nil {
			return ep, err
		}
		if done {
			return ep, nil
		}
		why = w
		if !worker.Sleep(ctx, time.Second) {
			return ep, c.Errorf("the servers were not ready within %v: %s (see `kubectl -n %s describe pods`)", r.ServerWait, why, ns)
		}
	}
}

// serversReady looks once: the endpoints when everything is ready, else
// what is not yet; an error when a server has failed for good.
func (r *Runner) serversReady(ctx context.Context, ns string) (Endpoints, bool, string, error) {
	var ep Endpoints
	pods := r.Cluster.Client.CoreV1().Pods(ns)
	for _, name := range []string{HostServerName, ServerName} {
		pod, err := pods.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return ep, false, fmt.Sprintf("pod %s: %v", name, cluster.OneLine(err)), nil
		}
		if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
			return ep, false, "", fmt.Errorf("server pod %s/%s ended: %s", ns, name, r.serverFailure(ctx, pod))
		}
		if !podReady(pod) {
			return ep, false, fmt.Sprintf("pod %s: %s", name, cluster.PodReason(pod)), nil
		}
		if name == HostServerName {
			ep.NodeIP = pod.Status.HostIP
		} else {
			ep.PodIP = pod.Status.PodIP
		}
	}
	svcs := r.Cluster.Client.CoreV1().Services(ns)
	for _, name := range []string{ClusterIPName, NodePortName} {
		svc, err := svcs.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return ep, false, fmt.Sprintf("Service %s: %v", name, cluster.OneLine(err)), nil
		}
		if name == ClusterIPName {
			ep.ClusterIP = svc.Spec.ClusterIP
		} else {
			for _, sp := range svc.Spec.Ports {
				switch sp.Port {
				case k8s.PortTCP:
					ep.NodePortTCP = sp.NodePort
				case k8s.PortHTTP:
					ep.NodePortHTTP = sp.NodePort
				case k8s.PortUDP:
					ep.NodePortUDP = sp.NodePort
				case PortMTLS:
					ep.NodePortMTLS = sp.NodePort
				}
			}
		}
		eps, err := r.Cluster.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + name})
		if err != nil {
			return ep, false, fmt.Sprintf("EndpointSlices of %s: %v", name, cluster.OneLine(err)), nil
		}
		if !hasReadyEndpoint(eps.Items, ep.PodIP) {
			return ep, false, fmt.Sprintf("Service %s has no ready endpoint %s yet", name, ep.PodIP), nil
		}
	}
	if ep.ClusterIP == "" || ep.ClusterIP == corev1.ClusterIPNone || ep.NodePortTCP == 0 || ep.NodePortHTTP == 0 || ep.NodePortUDP == 0 {
		return ep, false, "", fmt.Errorf("the Services got no ClusterIP or NodePorts (ClusterIP %q, NodePorts %d, %d)", ep.ClusterIP, ep.NodePortTCP, ep.NodePortHTTP)
	}
	if slices.Contains(r.Options.Tests, TestMTLS) && ep.NodePortMTLS == 0 {
		return ep, false, "", fmt.Errorf("the NodePort Service got no nodePort for its mtls port %d", PortMTLS)
	}
	return ep, true, "", nil
}

// FlannelBackendAnnotation is where Flannel's kube subnet manager
// publishes each node's backend.
const FlannelBackendAnnotation = "flannel.alpha.coreos.com/backend-type"

// flannelManagedAnnotation marks a node Flannel's kube subnet manager
// manages.
const flannelManagedAnnotation = "flannel.alpha.coreos.com/kube-subnet-manager"

// FlannelBackend is the Flannel backend the named nodes run, by their
// annotation: "" when none has it, an error when they differ. Flannel's
// udp backend (v0.28) publishes no backend type: on a node Flannel's
// kube subnet manager manages, an empty one is udp.
func FlannelBackend(nodes []corev1.Node, names []string) (string, error) {
	seen := map[string][]string{}
	for _, n := range nodes {
		if slices.Contains(names, n.Name) {
			b, ok := n.Annotations[FlannelBackendAnnotation]
			if ok && b == "" && n.Annotations[flannelManagedAnnotation] == "true" {
				b = "udp"
			}
			seen[b] = append(seen[b], n.Name)
		}
	}
	switch len(seen) {
	case 0:
		return "", nil
	case 1:
		for b := range seen {
			return b, nil
		}
	}
	var parts []string
	for _, b := range slices.Sorted(maps.Keys(seen)) {
		name := b
		if b == "" {
			name = "no Flannel"
		}
		parts = append(parts, fmt.Sprintf("%s on %v", name, seen[b]))
	}
	return "", fmt.Errorf("runs Flannel backends that differ between nodes (%s)", strings.Join(parts, ", "))
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func hasReadyEndpoint(slices []discoveryv1.EndpointSlice, ip string) bool {
	for _, s := range slices {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				continue
			}
			for _, a := range e.Addresses {
				if a == ip {
					return true
				}
			}
		}
	}
	return false
}

// serverFailure says why a server pod ended: its containers' exits and
// last log lines (a port the node already uses, for the hostNetwork one).
func (r *Runner) serverFailure(ctx context.Context, p *corev1.Pod) string {
	why := cluster.PodReason(p)
	for _, s := range p.Status.ContainerStatuses {
		t := s.State.Terminated
		if t == nil {
			continue
		}
		why += fmt.Sprintf("; container %s exit code %d %s", s.Name, t.ExitCode, t.Reason)
		n := int64(3)
		if log, err := r.Cluster.Client.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: s.Name, TailLines: &n}).DoRaw(ctx); err == nil {
			why += worker.Tail(log, 3)
		}
	}
	return why
}

// cleanup deletes the run's objects, with a context of its own (Ctrl-C
// must not stop it), and waits until they are gone: the hostNetwork
// server holds ports of the node until its pod is, and a namespace still
// terminating would refuse the next run.
func (r *Runner) cleanup(ctx context.Context, o Options) error {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
	defer cancel()
	kinds := append([]schema.GroupVersionKind{{Group: "batch", Version: "v1", Kind: "Job"}}, k8s.PathsKinds...)
	deleted, err := r.Cluster.Cleanup(cctx, o.Namespace, o.RunID, kinds...)
	r.say("cleanup: deleted %d objects of run %s", len(deleted), o.RunID)
	if err != nil {
		return err
	}
	for {
		left := ""
		ns, err := r.Cluster.Client.CoreV1().Namespaces().Get(cctx, o.Namespace, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			left = cluster.OneLine(err)
		case cluster.OwnNamespace(ns.Labels, o.RunID):
			left = "namespace " + o.Namespace + " is " + string(ns.Status.Phase)
		default:
			// Not ours to delete (it was there before): its pods of the run.
			list, err := r.Cluster.Client.CoreV1().Pods(o.Namespace).List(cctx, metav1.ListOptions{LabelSelector: k8s.Selector(o.RunID)})
			if err == nil && len(list.Items) == 0 {
				return nil
			}
			left = "pods of the run remain"
		}
		if !worker.Sleep(cctx, time.Second) {
			return fmt.Errorf("still there after 3m: %s", left)
		}
	}
}
