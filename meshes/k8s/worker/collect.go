package worker

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
)

// Labels and annotations the Job controller puts on its pods.
const (
	labelJobName    = "batch.kubernetes.io/job-name"
	annotationIndex = "batch.kubernetes.io/job-completion-index"
)

// Outcome is what became of one worker: its report, or why not.
type Outcome struct {
	Index  int
	Pod    string
	Report *Report
	Failed string // why there is no report
	// Mismatch tells whether the worker does not speak the coordinator's
	// wire version (its image is another loadgen's); every step would fail
	// alike.
	Mismatch bool
	// Late is how late the worker reached the start instant, as its
	// report says, when it failed (0: on time, or no report).
	Late time.Duration
	// Starting tells whether the pod was still being created or initialised
	// (pulled, its init containers run) when StartBy passed: late, not
	// broken.
	Starting bool
}

// Collection is what Collect waits for: the workers of an Indexed Job.
type Collection struct {
	Job     *batchv1.Job
	Workers int
	// StartBy is the instant past which a worker that has not started can
	// only be late and fails the step at once (zero: waited for until
	// Deadline).
	StartBy  time.Time
	Deadline time.Time
	// Check, when set, is asked about each worker pod at each look.
	Check PodCheck
	// Poll is how soon the pods are listed again after a failed list or a
	// watch that ended (the least time between two lists).
	Poll time.Duration
}

// Collect waits until every worker's container of an Indexed Job has
// ended (or until the deadline) and reads each one's report from its log
// (the worker container's: ContainerWorker). It lists the Job's pods once,
// then follows them through a watch from that list's resource version,
// listing again when the watch ends; only StartBy and Deadline wake it by
// time. Each index's pod is remembered as last seen: when the Job passes
// its deadline, the Job controller deletes its active pods, and a stuck
// worker's reason (ImagePullBackOff, Pending) must not go with them. A pod
// that is gone (deleted, or the Job's failure took it) has ended. Once
// StartBy has passed, a worker that has not started (its image cannot be
// pulled, it cannot be scheduled) can only be late: the step fails at
// once, with the pod's reason, instead of at the deadline.
//
// With Check set, a worker pod it refuses fails the step at once: a mesh
// that did not inject or enrol it (its figures would be the baseline's).
func Collect(ctx context.Context, c *cluster.Cluster, o Collection) []Outcome {
	job, workers := o.Job, o.Workers
	pods := c.Client.CoreV1().Pods(job.Namespace)
	sel := labelJobName + "=" + job.Name
	byIndex := map[int]*corev1.Pod{}
	gone := map[int]bool{}
	var notStarted map[int]bool
	refused := map[int]string{}
	listed := map[types.UID]bool{}

	deadline := time.NewTimer(time.Until(o.Deadline))
	defer deadline.Stop()
	var startBy <-chan time.Time
	if !o.StartBy.IsZero() {
		t := time.NewTimer(time.Until(o.StartBy))
		defer t.Stop()
		startBy = t.C
	}
	// done looks at the pods as last seen: whether the wait is over.
	done := func() bool {
		for i, p := range byIndex {
			gone[i] = !listed[p.UID]
			if o.Check != nil && !gone[i] {
				if why := o.Check(ctx, p); why != "" {
					refused[i] = why
				}
			}
		}
		if len(refused) > 0 || allEnded(byIndex, gone, workers) {
			return true
		}
		if !o.StartBy.IsZero() && !time.Now().Before(o.StartBy) {
			notStarted = unstarted(byIndex, gone, workers)
			return len(notStarted) > 0
		}
		return false
	}
	// wait waits for d, or less when the deadline or ctx comes first:
	// false then.
	wait := func(d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-deadline.C:
		case <-ctx.Done():
		}
		return false
	}
	var lastList time.Time
look:
	for {
		if since := time.Since(lastList); since < o.Poll && !wait(o.Poll-since) {
			break
		}
		lastList = time.Now()
		list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			if !wait(o.Poll) {
				break
			}
			continue
		}
		clear(listed)
		for i := range list.Items {
			listed[list.Items[i].UID] = true
		}
		remember(byIndex, list.Items)
		if done() {
			break
		}
		w, err := pods.Watch(ctx, metav1.ListOptions{LabelSelector: sel, ResourceVersion: list.ResourceVersion, AllowWatchBookmarks: true})
		if err != nil {
			continue
		}
		for watching := true; watching; {
			select {
			case ev, ok := <-w.ResultChan():
				p, isPod := ev.Object.(*corev1.Pod)
				switch {
				case !ok || ev.Type == watch.Error:
					watching = false // list again
					continue
				case !isPod || ev.Type == watch.Bookmark:
					continue
				case ev.Type == watch.Deleted:
					delete(listed, p.UID)
				default:
					listed[p.UID] = true
				}
				remember(byIndex, []corev1.Pod{*p})
				if done() {
					w.Stop()
					break look
				}
			case <-startBy:
				startBy = nil
				if done() {
					w.Stop()
					break look
				}
			case <-deadline.C:
				w.Stop()
				break look
			case <-ctx.Done():
				w.Stop()
				break look
			}
		}
		w.Stop()
	}
	out := make([]Outcome, workers)
	for i := range workers {
		switch {
		case len(refused) > 0 && refused[i] == "":
			out[i] = Outcome{Index: i, Failed: fmt.Sprintf("worker %d: stopped with the step", i)}
		case refused[i] != "":
			out[i] = Outcome{Index: i, Pod: byIndex[i].Name, Failed: fmt.Sprintf("worker %d (pod %s) %s", i, byIndex[i].Name, refused[i])}
		case notStarted[i]:
			o := Outcome{Index: i, Failed: fmt.Sprintf("worker %d: no pod was created by the start instant%s", i, jobConditions(ctx, c, job))}
			if p := byIndex[i]; p != nil {
				o.Pod = p.Name
				o.Failed = fmt.Sprintf("worker %d (pod %s) had not started by the start instant: %s%s", i, p.Name, cluster.PodReason(p), c.PodEvents(ctx, p))
				o.Starting = starting(p)
			}
			out[i] = o
		case gone[i]:
			if _, ended := workerExit(byIndex[i]); !ended {
				out[i] = Outcome{Index: i, Pod: byIndex[i].Name,
					Failed: fmt.Sprintf("worker %d (pod %s) was deleted while it ran (last seen %s)", i, byIndex[i].Name, cluster.PodReason(byIndex[i]))}
				continue
			}
			out[i] = outcome(ctx, c, job, i, byIndex[i])
		default:
			out[i] = outcome(ctx, c, job, i, byIndex[i])
		}
	}
	return out
}

// PodCheck says why a worker pod cannot measure its step, or "" when it
// can or cannot tell yet (its worker has not started): a mesh that did
// not inject or enrol it. It is asked at each look at the pods.
type PodCheck func(ctx context.Context, p *corev1.Pod) string

// Started tells whether a worker pod's worker container runs or has
// ended: the pod's network is set up, whatever a CNI plugin does to it.
func Started(p *corev1.Pod) bool {
	if _, ended := workerExit(p); ended {
		return true
	}
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == k8s.ContainerWorker && s.State.Running != nil {
			return true
		}
	}
	return false
}

// remember keeps the newest pod of each completion index: a later pod of
// the same index (a retry) replaces an earlier one, the same pod's newer
// state replaces its older, and a pod no longer listed stays as last seen.
func remember(byIndex map[int]*corev1.Pod, pods []corev1.Pod) {
	for i := range pods {
		p := &pods[i]
		idx, err := strconv.Atoi(p.Annotations[annotationIndex])
		if err != nil {
			continue
		}
		if q, ok := byIndex[idx]; !ok || q.UID == p.UID || p.CreationTimestamp.After(q.CreationTimestamp.Time) {
			byIndex[idx] = p
		}
	}
}

// allEnded tells whether every index has a pod whose worker ended, or
// whose pod is gone.
func allEnded(byIndex map[int]*corev1.Pod, gone map[int]bool, workers int) bool {
	for i := range workers {
		if p, ok := byIndex[i]; !ok {
			return false
		} else if _, ended := workerExit(p); !ended && !gone[i] {
			return false
		}
	}
	return true
}

// unstarted are the indexes whose worker container has not started: no
// pod yet, or a pod whose worker still waits (image pull, scheduling).
func unstarted(byIndex map[int]*corev1.Pod, gone map[int]bool, workers int) map[int]bool {
	out := map[int]bool{}
	for i := range workers {
		p, ok := byIndex[i]
		if !ok {
			out[i] = true
			continue
		}
		if gone[i] {
			continue
		}
		if !Started(p) {
			out[i] = true
		}
	}
	return out
}

// starting is a pod on its way to running: scheduled, and each of its
// containers not yet running only because it is being created or waits
// for the init containers (none failed, none backing off).
func starting(p *corev1.Pod) bool {
	if p.Spec.NodeName == "" || p.Status.Phase != corev1.PodPending {
		return false
	}
	for _, s := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		if w := s.State.Waiting; w != nil && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" {
			return false
		}
		if t := s.State.Terminated; t != nil && t.ExitCode != 0 {
			return false
		}
	}
	return true
}

// workerExit is the worker container's termination, if it ended.
func workerExit(p *corev1.Pod) (*corev1.ContainerStateTerminated, bool) {
	for _, s := range p.Status.ContainerStatuses {
		if s.Name == k8s.ContainerWorker && s.State.Terminated != nil {
			return s.State.Terminated, true
		}
	}
	if p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded {
		return nil, true
	}
	return nil, false
}

func outcome(ctx context.Context, c *cluster.Cluster, job *batchv1.Job, i int, p *corev1.Pod) Outcome {
	o := Outcome{Index: i}
	if p == nil {
		o.Failed = fmt.Sprintf("worker %d: no pod was created%s", i, jobConditions(ctx, c, job))
		return o
	}
	o.Pod = p.Name
	term, ended := workerExit(p)
	if !ended {
		o.Failed = fmt.Sprintf("worker %d (pod %s) never finished: %s", i, p.Name, cluster.PodReason(p))
		return o
	}
	if term == nil || term.ExitCode != 0 {
		why := cluster.PodReason(p)
		if term != nil {
			why = fmt.Sprintf("exit code %d", term.ExitCode)
			if term.Reason != "" {
				why += " (" + term.Reason + ")"
			}
			if term.Message != "" {
				why += ": " + term.Message
			}
		}
		log := lastLog(ctx, c, p)
		o.Failed, o.Mismatch = failure(i, p.Name, why, log)
		if r, _ := ParseReport(log); r != nil {
			o.Late = time.Duration(r.Late)
		}
		return o
	}
	log, err := c.Client.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: k8s.ContainerWorker,
		LimitBytes: ptrInt64(64 << 20)}).DoRaw(ctx)
	if err != nil {
		o.Failed = fmt.Sprintf("worker %d (pod %s): reading its log: %v", i, p.Name, cluster.OneLine(err))
		return o
	}
	r, err := ParseReport(log)
	if err != nil {
		o.Failed = fmt.Sprintf("worker %d (pod %s): %v%s", i, p.Name, err, Tail(log, 5))
		return o
	}
	if r.Error != "" || r.Run == nil {
		o.Failed = fmt.Sprintf("worker %d (pod %s): %s", i, p.Name, r.Error)
		o.Late = time.Duration(r.Late)
		return o
	}
	o.Report = r
	return o
}

func ptrInt64(v int64) *int64 { return &v }

// failure says why worker i (pod) failed, from how its container ended
// (why) and the end of its log: the error of its report line, else its
// last log lines; mismatch when it does not speak this coordinator's wire
// version (wireMismatch).
func failure(i int, pod, why string, log []byte) (msg string, mismatch bool) {
	r, _ := ParseReport(log)
	if m := wireMismatch(log, r); m != "" {
		return fmt.Sprintf("worker %d (pod %s) refused the step, %s: %s", i, pod, why, m), true
	}
	if r != nil && r.Error != "" {
		return fmt.Sprintf("worker %d (pod %s) failed, %s: %s", i, pod, why, r.Error), false
	}
	return fmt.Sprintf("worker %d (pod %s) failed: %s%s", i, pod, why, Tail(log, 5)), false
}

// lastLog is the end of a failed worker's log (its last 20 lines), where
// its report line and its error are; none when it cannot be read.
func lastLog(ctx context.Context, c *cluster.Cluster, p *corev1.Pod) []byte {
	log, err := c.Client.CoreV1().Pods(p.Namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: k8s.ContainerWorker,
		TailLines: ptrInt64(20)}).DoRaw(ctx)
	if err != nil {
		return nil
	}
	return log
}

// Tail is a log's last n lines, less the report line, for a failure
// message: "; last log lines: …", or empty.
func Tail(log []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(log), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var keep []string
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, ReportMarker) {
			keep = append(keep, l)
		}
	}
	if len(keep) == 0 {
		return ""
	}
	return "; last log lines: " + strings.Join(keep, " | ")
}

func jobConditions(ctx context.Context, c *cluster.Cluster, job *batchv1.Job) string {
	j, err := c.Client.BatchV1().Jobs(job.Namespace).Get(ctx, job.Name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	var cs []string
	for _, cond := range j.Status.Conditions {
		if cond.Status == corev1.ConditionTrue {
			cs = append(cs, fmt.Sprintf("%s %s: %s", cond.Type, cond.Reason, cond.Message))
		}
	}
	sort.Strings(cs)
	if len(cs) == 0 {
		return ""
	}
	return " (Job: " + strings.Join(cs, "; ") + ")"
}
