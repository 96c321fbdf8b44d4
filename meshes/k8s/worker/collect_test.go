package worker

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
)

func workerPod(uid string, index string, created time.Time, waiting string) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "w-" + uid, UID: types.UID(uid), CreationTimestamp: metav1.NewTime(created),
			Annotations: map[string]string{annotationIndex: index}},
		Status: corev1.PodStatus{Phase: corev1.PodPending, ContainerStatuses: []corev1.ContainerStatus{{Name: k8s.ContainerWorker,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: waiting}}}}},
	}
}

// A stuck worker's pod, deleted by the Job controller at the deadline,
// keeps its last seen reason; the same pod's newer state and a retry's
// pod replace older ones.
func TestRememberPods(t *testing.T) {
	t0 := time.Now()
	byIndex := map[int]*corev1.Pod{}
	remember(byIndex, []corev1.Pod{workerPod("a", "0", t0, "ContainerCreating"), workerPod("b", "1", t0, "ContainerCreating")})
	remember(byIndex, []corev1.Pod{workerPod("a", "0", t0, "ImagePullBackOff")})
	remember(byIndex, nil) // both deleted
	if r := byIndex[0].Status.ContainerStatuses[0].State.Waiting.Reason; r != "ImagePullBackOff" {
		t.Errorf("index 0 kept %q, want its last seen state", r)
	}
	if byIndex[1] == nil || byIndex[1].UID != "b" {
		t.Errorf("index 1 forgotten once its pod went: %+v", byIndex[1])
	}
	remember(byIndex, []corev1.Pod{workerPod("c", "1", t0.Add(-time.Minute), "x")}) // an older pod: ignored
	remember(byIndex, []corev1.Pod{workerPod("d", "1", t0.Add(time.Minute), "y")})  // a retry: replaces
	if byIndex[1].UID != "d" {
		t.Errorf("index 1 is pod %s, want the retry d", byIndex[1].UID)
	}
	if allEnded(byIndex, map[int]bool{}, 2) {
		t.Error("pending workers taken as ended")
	}
	// A pod that is gone has ended; a worker still waiting has not started.
	if !allEnded(byIndex, map[int]bool{0: true, 1: true}, 2) {
		t.Error("deleted pods not taken as ended")
	}
	if u := unstarted(byIndex, map[int]bool{0: true}, 3); !u[1] || !u[2] || u[0] {
		t.Errorf("unstarted %v: want 1 (waiting) and 2 (no pod), not 0 (gone)", u)
	}
	running := workerPod("e", "1", t0.Add(2*time.Minute), "")
	running.Status.ContainerStatuses[0].State = corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	remember(byIndex, []corev1.Pod{running})
	if u := unstarted(byIndex, map[int]bool{}, 2); u[1] || !u[0] {
		t.Errorf("unstarted %v: a running worker has started", u)
	}
}

// TestCollectRefusedWorker checks that a worker pod the step's check refuses
// (a mesh that did not inject or enrol it) fails the step at once, saying
// why, without waiting for the deadline.
func TestCollectRefusedWorker(t *testing.T) {
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "lg-r-0", Namespace: "bench"}}
	var objs []runtime.Object
	for i, name := range []string{"w0", "w1"} {
		p := workerPod(name, strconv.Itoa(i), time.Now(), "ContainerCreating")
		p.Namespace, p.Labels = "bench", map[string]string{labelJobName: job.Name}
		objs = append(objs, &p)
	}
	c := &cluster.Cluster{Client: fake.NewClientset(objs...)}
	check := func(_ context.Context, p *corev1.Pod) string {
		if p.Name == "w-w1" {
			return "is not enrolled"
		}
		return ""
	}
	start := time.Now()
	out := Collect(context.Background(), c, Collection{Job: job, Workers: 2, Deadline: time.Now().Add(time.Hour), Poll: time.Millisecond, Check: check})
	if time.Since(start) > time.Minute {
		t.Fatal("waited for the deadline")
	}
	if got := out[1].Failed; got != "worker 1 (pod w-w1) is not enrolled" {
		t.Errorf("worker 1: %q", got)
	}
	if got := out[0].Failed; !strings.Contains(got, "stopped with the step") {
		t.Errorf("worker 0: %q", got)
	}
}

// jobPods is a fake cluster holding a Job's two worker pods, pending, and
// the Job.
func jobPods(t *testing.T) (*fake.Clientset, *batchv1.Job) {
	t.Helper()
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "lg-w-0", Namespace: "bench"}}
	var objs []runtime.Object
	for i, name := range []string{"w0", "w1"} {
		p := workerPod(name, strconv.Itoa(i), time.Now(), "ContainerCreating")
		p.Namespace, p.Labels = "bench", map[string]string{labelJobName: job.Name}
		objs = append(objs, &p)
	}
	return fake.NewClientset(objs...), job
}

// endWorkers makes each worker's container exit with code 1, as the
// kubelet reports it.
func endWorkers(t *testing.T, cs *fake.Clientset) {
	t.Helper()
	for _, name := range []string{"w-w0", "w-w1"} {
		p, err := cs.CoreV1().Pods("bench").Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		p.Status.Phase = corev1.PodFailed
		p.Status.ContainerStatuses[0].State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}
		if _, err := cs.CoreV1().Pods("bench").UpdateStatus(context.Background(), p, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// collecting runs Collect in the background, its deadline a minute away
// (the bound of a test that fails); it returns the outcomes' channel.
func collecting(cs *fake.Clientset, job *batchv1.Job, poll time.Duration) chan []Outcome {
	out := make(chan []Outcome, 1)
	go func() {
		out <- Collect(context.Background(), &cluster.Cluster{Client: cs}, Collection{Job: job, Workers: 2,
			Deadline: time.Now().Add(time.Minute), Poll: poll})
	}()
	return out
}

// wantExit1 checks that both workers were seen to exit with code 1.
func wantExit1(t *testing.T, out []Outcome) {
	t.Helper()
	for i, o := range out {
		if !strings.Contains(o.Failed, "exit code 1") {
			t.Errorf("worker %d: %q, want its exit code 1", i, o.Failed)
		}
	}
}

// TestCollectWatches: Collect lists the Job's pods once and then follows
// them through a watch: the workers' ends, which arrive only as watch
// events (Poll is an hour: no second list comes before the deadline), end
// the collection.
func TestCollectWatches(t *testing.T) {
	cs, job := jobPods(t)
	var lists atomic.Int32
	cs.PrependReactor("list", "pods", func(k8stesting.Action) (bool, runtime.Object, error) {
		lists.Add(1)
		return false, nil, nil
	})
	watching := make(chan struct{})
	cs.PrependWatchReactor("pods", func(a k8stesting.Action) (bool, watch.Interface, error) {
		w, err := cs.Tracker().Watch(a.GetResource(), a.GetNamespace(), a.(k8stesting.WatchActionImpl).ListOptions)
		close(watching)
		return true, w, err
	})
	out := collecting(cs, job, time.Hour)
	select {
	case <-watching:
	case got := <-out:
		t.Fatalf("Collect returned before it watched: %+v", got)
	}
	endWorkers(t, cs)
	wantExit1(t, <-out)
	if n := lists.Load(); n != 1 {
		t.Errorf("%d lists, want 1 (the changes come through the watch)", n)
	}
}

// TestCollectRelistsWhenTheWatchEnds: a watch that ends (the API server
// closes watches after a while) is followed by a new list, which sees
// what the closed watch did not bring.
func TestCollectRelistsWhenTheWatchEnds(t *testing.T) {
	cs, job := jobPods(t)
	first := make(chan *watch.FakeWatcher, 1)
	var watches atomic.Int32
	cs.PrependWatchReactor("pods", func(k8stesting.Action) (bool, watch.Interface, error) {
		if watches.Add(1) > 1 {
			return false, nil, nil // the tracker's own watch
		}
		w := watch.NewFake()
		first <- w
		return true, w, nil
	})
	out := collecting(cs, job, time.Millisecond)
	w := <-first
	endWorkers(t, cs) // not told to the first watch
	w.Stop()
	wantExit1(t, <-out)
}

// TestCollectStartByWakes: once StartBy passes, workers that have not
// started fail the step then, with no pod change to wake Collect (Poll is
// an hour): its timer does.
func TestCollectStartByWakes(t *testing.T) {
	cs, job := jobPods(t)
	out := Collect(context.Background(), &cluster.Cluster{Client: cs}, Collection{Job: job, Workers: 2,
		StartBy: time.Now().Add(50 * time.Millisecond), Deadline: time.Now().Add(time.Minute), Poll: time.Hour})
	for i, o := range out {
		if !strings.Contains(o.Failed, "had not started by the start instant") {
			t.Errorf("worker %d: %q", i, o.Failed)
		}
	}
}

// TestStartingIsLateNotBroken: a pod scheduled and still being created or
// initialised when StartBy passes is late (the step may run again with
// more lead); one that cannot pull its image, is not scheduled, or whose
// init container failed is not.
func TestStartingIsLateNotBroken(t *testing.T) {
	pod := func(node string, init, main corev1.ContainerState) *corev1.Pod {
		p := workerPod("p", "0", time.Now(), "")
		p.Spec.NodeName = node
		p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "capture", State: init}}
		p.Status.ContainerStatuses[0].State = main
		return &p
	}
	waiting := func(r string) corev1.ContainerState {
		return corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: r}}
	}
	running := corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}
	exited := func(code int32) corev1.ContainerState {
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code}}
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"creating", pod("n1", exited(0), waiting("ContainerCreating")), true},
		{"init running", pod("n1", running, waiting("PodInitializing")), true},
		{"init being created", pod("n1", waiting("ContainerCreating"), waiting("PodInitializing")), true},
		{"not scheduled", pod("", waiting("ContainerCreating"), waiting("PodInitializing")), false},
		{"image pull", pod("n1", exited(0), waiting("ImagePullBackOff")), false},
		{"init failed", pod("n1", exited(1), waiting("PodInitializing")), false},
		{"init crashing", pod("n1", waiting("CrashLoopBackOff"), waiting("PodInitializing")), false},
	} {
		if got := starting(tc.pod); got != tc.want {
			t.Errorf("%s: starting %v, want %v", tc.name, got, tc.want)
		}
	}
	// Through Collect: a scheduled pod being created is Starting.
	cs, job := jobPods(t)
	p, err := cs.CoreV1().Pods("bench").Get(context.Background(), "w-w0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.NodeName = "n1"
	if _, err := cs.CoreV1().Pods("bench").Update(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	out := Collect(context.Background(), &cluster.Cluster{Client: cs}, Collection{Job: job, Workers: 2,
		StartBy: time.Now().Add(50 * time.Millisecond), Deadline: time.Now().Add(time.Minute), Poll: time.Hour})
	if !out[0].Starting || out[1].Starting {
		t.Errorf("Starting: worker 0 (scheduled, being created) %v, worker 1 (not scheduled) %v", out[0].Starting, out[1].Starting)
	}
}
