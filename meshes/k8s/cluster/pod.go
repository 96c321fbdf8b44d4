package cluster

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Why a pod is where it is, for the messages of a step or a server that
// did not run.

// PodReason says why a pod is where it is: a container's waiting reason
// (ImagePullBackOff…), an unschedulable condition, or its phase.
func PodReason(p *corev1.Pod) string {
	for _, s := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
		if w := s.State.Waiting; w != nil && w.Reason != "" {
			return fmt.Sprintf("%s: container %s %s %s", p.Status.Phase, s.Name, w.Reason, w.Message)
		}
	}
	for _, cond := range p.Status.Conditions {
		if cond.Status == corev1.ConditionFalse && cond.Reason != "" {
			return fmt.Sprintf("%s: %s %s: %s", p.Status.Phase, cond.Type, cond.Reason, cond.Message)
		}
	}
	if p.Status.Reason != "" {
		return fmt.Sprintf("%s: %s %s", p.Status.Phase, p.Status.Reason, p.Status.Message)
	}
	if p.Spec.NodeName == "" {
		return fmt.Sprintf("%s: not scheduled to a node", p.Status.Phase)
	}
	return string(p.Status.Phase)
}

// PodEvents are the pod's latest warnings (a failed pull, a failed
// probe), which its status does not hold.
func (c *Cluster) PodEvents(ctx context.Context, p *corev1.Pod) string {
	l, err := c.Client.CoreV1().Events(p.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.name=" + p.Name + ",type=Warning"})
	if err != nil || len(l.Items) == 0 {
		return ""
	}
	sort.Slice(l.Items, func(i, j int) bool { return eventTime(l.Items[i]).Before(eventTime(l.Items[j])) })
	var out []string
	for _, e := range l.Items[max(0, len(l.Items)-2):] {
		out = append(out, fmt.Sprintf("%s: %s", e.Reason, strings.TrimSpace(e.Message)))
	}
	return "; events: " + strings.Join(out, " | ")
}

func eventTime(e corev1.Event) time.Time {
	if !e.LastTimestamp.IsZero() {
		return e.LastTimestamp.Time
	}
	if !e.EventTime.IsZero() {
		return e.EventTime.Time
	}
	return e.CreationTimestamp.Time
}

// HasContainer tells whether a pod runs a container of that name, as an
// app container or as a native sidecar (an init container).
func HasContainer(p *corev1.Pod, name string) bool {
	for _, c := range append(append([]corev1.Container(nil), p.Spec.InitContainers...), p.Spec.Containers...) {
		if c.Name == name {
			return true
		}
	}
	return false
}
