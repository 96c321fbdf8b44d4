package worker

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"

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
	out := CollectBy(context.Background(), c, job, 2, time.Time{}, time.Now().Add(time.Hour), time.Millisecond, check)
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
