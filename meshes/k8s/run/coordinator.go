// Package run is the coordinator of a distributed run: a sweep on a
// cluster, each step one Indexed Job of workers started at one instant.
// It applies the comparison's objects, checks that the mesh is really
// there, waits for the target and the ingress's or gateway's published
// address, runs the steps, merges the workers' results exactly into a
// sweep results directory, records the proxies' cost over each step's
// load, and deletes what it created.
package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
	"loadgen/meshes/k8s/cost"
	"loadgen/meshes/k8s/worker"
	"loadgen/results"
	"loadgen/results/merge"
	"loadgen/results/store"
)

// WorkersDir holds, beside a sweep's steps, each step's workers: their
// shares, generator cost, clock offsets and lateness.
const WorkersDir = "workers"

// Defaults of a coordinator (and of k8s run's flags).
const (
	// DefaultStartLead is StartLead's default: the time to schedule and
	// start a step's pods.
	DefaultStartLead = 30 * time.Second
	// DefaultTargetWait is TargetWait's default.
	DefaultTargetWait = 5 * time.Minute
	// DefaultStartRetries is how many times k8s run runs a step again
	// when its workers started late (--start-retries). A Coordinator's
	// StartRetries left 0 means none: 0 is a choice (fail the step), so
	// it is not filled in.
	DefaultStartRetries = 2
)

// Coordinator runs a sweep on a cluster: it applies the comparison's
// objects, runs each step as an Indexed Job, merges the workers' results
// into a sweep results directory (loadgen/sweep's layout, so `loadgen
// report` reads it) and deletes everything it created.
type Coordinator struct {
	Cluster *cluster.Cluster
	Options k8s.Options // RunID names this run's label
	Load    k8s.Load
	Steps   []k8s.Step
	Workers int
	Dir     string
	// Manifest is the results directory's manifest (the sweep as asked);
	// Steps fills its step list.
	Manifest results.Manifest
	// StartLead is how far ahead of its creation a step's Job is told to
	// start: the time to schedule and start N pods (default
	// DefaultStartLead, 30 s).
	StartLead time.Duration
	// MaxLate is how late a worker may start (default
	// worker.DefaultMaxLate, 2 s).
	MaxLate time.Duration
	// StartRetries is how many times a step whose only failures are
	// workers that started late (past MaxLate, or still being created or
	// initialised) is run again, each time with twice the StartLead, which
	// the steps after it keep. 0: the step fails.
	StartRetries int
	// Watcher samples the mesh's containers during each step; nil: none.
	// It records the nodes' own figures too (the nodes that ran the
	// step's targets, workers and proxies) unless Options.NoNodeCost.
	Watcher cost.Watcher
	Poll    time.Duration                    // how often pods are looked at (default 1 s)
	Events  func(format string, args ...any) // progress for people
	// OnStep, when set, is given each step as it finishes (written to
	// Dir), failed ones too: a live view's (--ui).
	OnStep func(*results.Step)
	// TargetWait bounds the wait for the target (and the ingress or
	// gateway address) when the sweep loads it (default
	// DefaultTargetWait, 5 min).
	TargetWait time.Duration
	// PublishWait bounds, with --via service, the wait for an ingress's or
	// a gateway's published address when its controller's Service cannot
	// be found (default DefaultPublishWait): past it the steps fail with
	// one line naming --ingress-service.
	PublishWait time.Duration
	// Version is this loadgen's version, told to the workers with
	// k8s.WireVersion: a worker of another wire version names it when it
	// refuses to run.
	Version string

	said map[string]bool // what sayOnce said
	// proxies are the watches of an ingress's or a gateway's proxy, found
	// from its published address.
	proxies []cost.Watch
	// inProxy are the control planes whose pods are a proxy's too
	// (findProxies): counted once, by the proxy's watch.
	inProxy map[string]bool
	version string // the API server's, once asked
	// ztunnelNamespace is where checkMesh found the ambient mesh's
	// ztunnel.
	ztunnelNamespace string
	// stepRunner, when set, runs a step in place of runStep (a test's).
	stepRunner func(ctx context.Context, st k8s.Step, addr k8s.Addresses, off worker.Offset, attempt int) (*results.Step, []merge.Worker, bool)
	// mismatch is why a worker refused to speak with this coordinator
	// (worker.ErrWire): the run stops, since every step would fail alike.
	mismatch string
}

func (k *Coordinator) say(format string, args ...any) {
	if k.Events != nil {
		k.Events(format, args...)
	}
}

// sayOnce says a message once per run.
func (k *Coordinator) sayOnce(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if k.said[msg] {
		return
	}
	if k.said == nil {
		k.said = map[string]bool{}
	}
	k.said[msg] = true
	k.say("%s", msg)
}

func (k *Coordinator) defaults() {
	if k.StartLead == 0 {
		k.StartLead = DefaultStartLead
	}
	if k.MaxLate == 0 {
		k.MaxLate = worker.DefaultMaxLate
	}
	if k.Poll == 0 {
		k.Poll = time.Second
	}
	if k.TargetWait == 0 {
		k.TargetWait = DefaultTargetWait
	}
	if k.Workers == 0 {
		k.Workers = 1
	}
}

// Check fills the options' defaults and checks them against the steps,
// as Run and DryRun do first: the routes an ingress or a gateway renders
// are the kinds the steps take (k8s.Options.RoutesOf), and a step the
// mesh cannot carry is refused here, before anything is applied.
func (k *Coordinator) Check() error {
	k.defaults()
	o, err := k.Options.WithDefaults()
	if err != nil {
		return err
	}
	if o.Published() {
		routes, err := o.RoutesOf(k.Steps)
		if err != nil {
			return err
		}
		o.Routes = routes
		if o, err = o.WithDefaults(); err != nil {
			return err
		}
	}
	k.Options = o
	return nil
}

// Objects are what the run applies: the rendering without its client Job
// and without what is not loadgen's (the ingress controller's ConfigMap,
// which --configure-controller changes and puts back), and the Secret of
// the paths' client certificates.
func (k *Coordinator) Objects() ([]*unstructured.Unstructured, []string, error) {
	r, err := k8s.Render(k.Options, nil)
	if err != nil {
		return nil, nil, err
	}
	var out []*unstructured.Unstructured
	notes := r.Notes
	for _, u := range r.WithoutClient() {
		if u.GetLabels()[k8s.LabelManagedBy] != k8s.ManagedBy {
			continue // the controller's ConfigMap: configureController's, put back at the end
		}
		out = append(out, u)
	}
	certs, err := k.Options.ClientCertObjects(k.Load.ClientCerts)
	if err != nil {
		return nil, nil, err
	}
	us, err := k8s.ToUnstructured(certs...)
	if err != nil {
		return nil, nil, err
	}
	return append(out, us...), notes, nil
}

// Run runs every step and returns them in plan order. A failed step is
// recorded and the sweep goes on; Ctrl-C (ctx) stops after the current
// step. Whatever happens, the objects it created are deleted.
func (k *Coordinator) Run(ctx context.Context) (steps []*results.Step, err error) {
	if err := k.Check(); err != nil {
		return nil, err
	}
	if err := k.nativeSidecars(ctx); err != nil {
		return nil, err
	}
	o := k.Options
	objs, notes, err := k.Objects()
	if err != nil {
		return nil, err
	}
	for _, n := range notes {
		k.say("%s", n)
	}
	if err := k.Cluster.CheckKinds(o.Mesh, objs); err != nil {
		return nil, err
	}
	if err := k.Cluster.CheckNamespace(ctx, o.Namespace); err != nil {
		return nil, err
	}
	if err := k.prepareDir(); err != nil {
		return nil, err
	}
	var changed *cluster.ControllerChange
	defer func() {
		// A fresh context: Ctrl-C must not stop the cleanup.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		defer cancel()
		done := k.Cluster.CleanupRun(cctx, cluster.RunCleanup{Namespace: o.Namespace, RunID: o.RunID, Kinds: cluster.RunKinds(objs),
			Restore: changed != nil, IngressNamespaces: []string{o.IngressNamespace}})
		if changed != nil {
			changed.Restored = done.RestoreErr == nil && len(done.Restored) > 0
			if rerr := done.RestoreErr; rerr != nil {
				changed.RestoreError = rerr.Error()
				err = errors.Join(err, fmt.Errorf("%w (run `loadgen k8s cleanup -n %s`)", rerr, o.Namespace))
			} else {
				k.say("restored %s", strings.Join(done.Restored, ", "))
			}
			if werr := k.writeController(changed); werr != nil {
				err = errors.Join(err, werr)
			}
		}
		k.say("cleanup: deleted %d objects of run %s", len(done.Deleted), o.RunID)
		if cerr := done.DeleteErr; cerr != nil {
			err = errors.Join(err, fmt.Errorf("cleanup: %w (run `loadgen k8s cleanup -n %s`)", cerr, o.Namespace))
		}
	}()
	if err := k.Cluster.Apply(ctx, objs); err != nil {
		return nil, err
	}
	k.say("applied %d objects (run %s) in namespace %s", len(objs), o.RunID, o.Namespace)
	if err := k.checkClass(ctx); err != nil {
		return nil, err
	}
	if o.ConfigureController {
		if changed, err = k.configureController(ctx); err != nil {
			return nil, err
		}
	}
	// A target that never gets ready fails the steps that load it, with
	// its pods' reason; the sweep's other steps still run.
	addr, terr := k.waitTarget(ctx)
	if err := k.writeSetup(addr); err != nil {
		return nil, err
	}
	if terr != nil {
		if ctx.Err() != nil || errors.Is(terr, ErrMeshMissing) {
			return nil, terr
		}
		k.say("%v", terr)
	} else if k.usesTarget() {
		if err := k.checkMesh(ctx); err != nil {
			return nil, err
		}
		k.findProxies(ctx, addr)
	}
	off, err := k.clockOffset(ctx)
	if err != nil {
		return nil, err
	}
	for _, st := range k.Steps {
		if ctx.Err() != nil {
			break
		}
		var res *results.Step
		var workers []merge.Worker
		if terr != nil && st.UsesTarget() {
			res = newStep(st)
			res.Failed = terr.Error()
		} else {
			k.say("step %d/%d %s: %d workers", st.Index+1, len(k.Steps), st.ID, k.Workers)
			res, workers = k.runStepOnTime(ctx, st, addr, off)
		}
		if err := k.record(steps, res, workers); err != nil {
			return append(steps, res), err
		}
		if res.Failed != "" {
			k.say("step %s failed: %s", st.ID, res.Failed)
		} else {
			s := res.Run.Summary
			k.say("step %s: %.1f req/s, p50 %v p99 %v (%d workers merged)", st.ID, s.RPS, s.Latency.P50, s.Latency.P99, k.Workers)
		}
		steps = append(steps, res)
		if k.OnStep != nil {
			k.OnStep(res)
		}
		if k.mismatch != "" {
			return steps, fmt.Errorf("%s (step %s; the steps after it were not run)", k.mismatch, st.ID)
		}
	}
	return steps, ctx.Err()
}

// record writes a finished step and its workers into the results
// directory. A path whose answers are not its baseline's kind at this step
// (a redirect where the baseline answered 200) fails, whichever of the two
// ran first: the one of steps (those before) is written again.
func (k *Coordinator) record(steps []*results.Step, res *results.Step, workers []merge.Worker) error {
	again := results.FailStatusMixes(append(slices.Clip(steps), res))
	if err := store.WriteJSON(filepath.Join(k.Dir, store.StepsDir, res.ID+".json"), res); err != nil {
		return fmt.Errorf("step %s: %w", res.ID, err)
	}
	for _, prev := range again {
		if prev == res {
			continue
		}
		k.say("step %s failed: %s", prev.ID, prev.Failed)
		if err := store.WriteJSON(filepath.Join(k.Dir, store.StepsDir, prev.ID+".json"), prev); err != nil {
			return fmt.Errorf("step %s: %w", prev.ID, err)
		}
	}
	if workers != nil {
		if err := store.WriteJSON(filepath.Join(k.Dir, WorkersDir, res.ID+".json"), workers); err != nil {
			return fmt.Errorf("step %s workers: %w", res.ID, err)
		}
	}
	return nil
}

// MeshFile holds, in a results directory, the run's k8s.Setup: the
// mesh, how the workers reached an ingress or a gateway and where.
const MeshFile = "mesh.json"

// writeSetup records the run's setup with the address the mesh steps
// load (none when the target or the address never came).
func (k *Coordinator) writeSetup(addr k8s.Addresses) error {
	s := k.Options.Setup()
	if addr != (k8s.Addresses{}) {
		s.Address = &addr
	}
	if err := store.WriteJSON(filepath.Join(k.Dir, MeshFile), s); err != nil {
		return fmt.Errorf("results directory: %w", err)
	}
	return nil
}

// prepareDir writes the results directory's manifest.
func (k *Coordinator) prepareDir() error {
	if _, err := os.Stat(filepath.Join(k.Dir, store.ManifestFile)); err == nil {
		return fmt.Errorf("%s already holds a sweep: choose another -o", k.Dir)
	}
	for _, d := range []string{store.StepsDir, WorkersDir} {
		if err := os.MkdirAll(filepath.Join(k.Dir, d), 0o755); err != nil {
			return fmt.Errorf("results directory: %w", err)
		}
	}
	m := k.Manifest
	m.Schema, m.Tool, m.Kind = results.SchemaVersion, "loadgen", "sweep"
	if m.Created.IsZero() {
		m.Created = time.Now().UTC()
	}
	m.Steps = nil
	for _, st := range k.Steps {
		m.Steps = append(m.Steps, st.ID)
	}
	if m.Spec == nil {
		m.Spec = json.RawMessage("{}")
	}
	return store.WriteJSON(filepath.Join(k.Dir, store.ManifestFile), m)
}

// usesTarget tells whether any step loads the comparison's target.
func (k *Coordinator) usesTarget() bool {
	for _, st := range k.Steps {
		if st.UsesTarget() {
			return true
		}
	}
	return false
}

// clockOffset measures the coordinator's clock against the API server's,
// the reference every worker measures itself against too.
func (k *Coordinator) clockOffset(ctx context.Context) (worker.Offset, error) {
	hc, err := k.Cluster.HTTPClient()
	if err != nil {
		return worker.Offset{}, err
	}
	off, err := worker.MeasureOffset(ctx, hc, strings.TrimRight(k.Cluster.Host, "/")+"/version")
	if err != nil {
		return worker.Offset{}, k.Cluster.Errorf("clock: %v", err)
	}
	k.say("coordinator clock: %v from the API server's (±%v)", off.Offset.Round(time.Millisecond), off.Error.Round(time.Millisecond))
	return off, nil
}
