package worker

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"loadgen/meshes/k8s"
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
