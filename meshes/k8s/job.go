package k8s

import (
	"fmt"
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// JobSpec is one load of N workers: an Indexed Job whose pods each run
// `loadgen k8s worker`, which waits for StartAt and then runs `loadgen
// run` with its share of the connections, threads and rate.
type JobSpec struct {
	Name        string
	Workers     int
	StartAt     time.Time     // zero: start at once (a rendering applied by hand)
	MaxLate     time.Duration // a worker that reaches StartAt later than this refuses to run
	Connections int           // in all, split over the workers
	Threads     int
	Rate        float64  // requests/s in all; 0: closed loop
	RunArgs     []string // `loadgen run`'s other flags and the URL, last
	// Deadline bounds the Job (activeDeadlineSeconds): wait, warm-up,
	// measurement and the time to start.
	Deadline time.Duration
	// Index is the sweep step the Job runs (a label, for people).
	Index int
	// Direct tells whether the Job loads the direct path (the baseline), and
	// in an ambient mesh its pods are left out of the mesh.
	Direct bool
	// Version is the coordinator's loadgen version, which a worker of
	// another WireVersion names when it refuses to run; empty: not told.
	Version string
	// ClientCert mounts the run's client certificates (ClientCertSecret)
	// in the workers, for RunArgs that name them (ClientCertArgs).
	ClientCert bool
	// AwayFrom are more pods the workers keep off the nodes of, beside
	// the targets and the proxies the options name: the proxies an ingress
	// or a gateway publishes, which only the cluster knows.
	AwayFrom []PodsOf
}

// PodsOf are the pods of a namespace that a label selector selects.
type PodsOf struct {
	Namespace string
	Selector  *metav1.LabelSelector
}

// CheckRunCounts checks k8s run's counts before anything starts:
// workers, the pods of each step's Job (1 or more), and startRetries, the
// reruns of a step whose workers started late (0: the step fails).
func CheckRunCounts(workers, startRetries int) error {
	if workers < 1 {
		return fmt.Errorf("--workers %d: want 1 or more", workers)
	}
	if startRetries < 0 {
		return fmt.Errorf("--start-retries %d: want 0 (fail a late step) or more", startRetries)
	}
	return nil
}

// ContainerWorker is the worker container's name: the coordinator waits for
// it to terminate and reads its log, whatever sidecars the pod has.
const ContainerWorker = "loadgen"

// WorkerArgs is the worker container's command line (after the image's
// entrypoint, /loadgen).
func (s JobSpec) WorkerArgs() []string {
	a := []string{"k8s", "worker", FlagWire, strconv.Itoa(WireVersion)}
	if s.Version != "" {
		a = append(a, FlagCoordinatorVersion, s.Version)
	}
	a = append(a, "--workers", strconv.Itoa(s.Workers),
		"--connections", strconv.Itoa(s.Connections),
		"--threads", strconv.Itoa(s.Threads))
	if s.Rate > 0 {
		a = append(a, "--rate", strconv.FormatFloat(s.Rate, 'f', -1, 64))
	}
	if !s.StartAt.IsZero() {
		a = append(a, "--start-at", s.StartAt.UTC().Format(time.RFC3339Nano))
	}
	if s.MaxLate > 0 {
		a = append(a, "--max-late", s.MaxLate.String())
	}
	a = append(a, "--", "run")
	return append(a, s.RunArgs...)
}

// clientLabels select the client pods.
func clientLabels() map[string]string { return map[string]string{LabelName: ClientName} }

// Job renders the Indexed Job of spec.
func (o Options) Job(s JobSpec) *batchv1.Job {
	n := int32(max(1, s.Workers))
	extra := clientLabels()
	extra[LabelStep] = strconv.Itoa(s.Index)
	podLabels := o.labels(extra)
	meshLabels, annotations := o.clientPod(s.Direct)
	for k, v := range meshLabels {
		podLabels[k] = v
	}
	pod := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: annotations},
		Spec: corev1.PodSpec{
			RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{
				Name:            ContainerWorker,
				Image:           o.Image,
				ImagePullPolicy: corev1.PullIfNotPresent,
				Args:            s.WorkerArgs(),
				SecurityContext: Restricted(),
				Resources:       o.workerResources(),
				VolumeMounts:    []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}},
			}},
			Volumes:  []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
			Affinity: o.awayFrom(s.AwayFrom),
		},
	}
	if s.ClientCert {
		mountClientCert(&pod.Spec)
	}
	o.placeWorkers(&pod.Spec)
	o.addSidecar(&pod.Spec, false, sidecarObject)
	job := &batchv1.Job{
		ObjectMeta: o.Meta(s.Name, o.Namespace, extra),
		Spec: batchv1.JobSpec{
			CompletionMode: ptr.To(batchv1.IndexedCompletion),
			Completions:    ptr.To(n),
			Parallelism:    ptr.To(n),
			// A worker that failed is not retried: a retry would start
			// late and measure another window.
			BackoffLimit: ptr.To[int32](0),
			Template:     pod,
		},
	}
	if s.Deadline > 0 {
		job.Spec.ActiveDeadlineSeconds = ptr.To(int64((s.Deadline + time.Second - 1) / time.Second))
	}
	return job
}

// IngressNginxController selects the ingress-nginx controller's pods, as
// its chart labels them.
var IngressNginxController = map[string]string{LabelName: "ingress-nginx", LabelComponent: "controller"}

// awayFrom keeps client pods off the nodes of the targets, as istio/tools'
// benchmarks do, so that the load crosses the network, and off those of
// the proxies between them (the waypoint, the ingress controller, and the
// pods more names: a gateway's), so that a worker takes no CPU from a
// proxy it measures; SameNodeOK turns the rule into a preference. Node
// agents (ztunnel) run on every node and are not avoided.
func (o Options) awayFrom(more []PodsOf) *corev1.Affinity {
	const host = "kubernetes.io/hostname"
	terms := []corev1.PodAffinityTerm{{
		LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: LabelName, Operator: metav1.LabelSelectorOpIn, Values: o.TargetNames()}}},
		TopologyKey: host,
	}}
	if o.Mesh == MeshIstioWaypoint {
		terms = append(terms, corev1.PodAffinityTerm{TopologyKey: host,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"gateway.networking.k8s.io/gateway-name": WaypointName}}})
	}
	if o.Mesh == MeshIngressNginx {
		more = append([]PodsOf{{Namespace: o.IngressNamespace, Selector: &metav1.LabelSelector{MatchLabels: IngressNginxController}}}, more...)
	}
	for _, p := range more {
		t := corev1.PodAffinityTerm{TopologyKey: host, LabelSelector: p.Selector}
		if p.Namespace != o.Namespace {
			t.Namespaces = []string{p.Namespace}
		}
		terms = append(terms, t)
	}
	anti := &corev1.PodAntiAffinity{}
	if o.SameNodeOK {
		for _, t := range terms {
			anti.PreferredDuringSchedulingIgnoredDuringExecution = append(anti.PreferredDuringSchedulingIgnoredDuringExecution,
				corev1.WeightedPodAffinityTerm{Weight: 100, PodAffinityTerm: t})
		}
	} else {
		anti.RequiredDuringSchedulingIgnoredDuringExecution = terms
	}
	return &corev1.Affinity{PodAntiAffinity: anti}
}
