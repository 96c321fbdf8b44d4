package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/e2e/node"
	"loadgen/results/store"
)

// TestNodeFailures checks that, on the real node, a worker killed mid-step,
// workers whose image cannot be pulled, and a target that never gets ready
// each fail their steps with the pod's own reason, while the sweep goes on to
// its other steps; nothing labelled is left.
func TestNodeFailures(t *testing.T) {
	beside(t)
	n := testNode(t)
	bin := buildLoadgen(t)

	t.Run("killed-worker", func(t *testing.T) {
		ns := "node-fail-kill"
		sweep := writeNodeSweep(t, "ladder: c4t2,c6t2", "duration: 12s",
			`paths: [{name: direct, url: "http://target:8081", baseline: true}]`)
		dir := filepath.Join(t.TempDir(), "results")
		cmd, out := startLoadgen(t, bin, n.Kubeconfig, "k8s", "run", "-n", ns, "-f", sweep, "--workers", "2", "-o", dir,
			"--image", n.Image, "--same-node-ok", "--start-lead", nodeStartLead, "--target-wait", "90s", "--no-metrics", "--run-id", "kill")
		// Once worker 1 of the first step has loaded for a few seconds,
		// kill its process, as an OOM kill or a crash would.
		pod := waitWorkerRunning(t, n, ns, k8s.JobName("kill", 0), 1)
		time.Sleep(4 * time.Second)
		killed := killContainerProcess(t, string(pod.UID), "/loadgen")
		t.Logf("killed pid %d of worker pod %s", killed, pod.Name)
		code := waitExit(t, cmd, out, 4*time.Minute)
		if code != 1 {
			t.Fatalf("k8s run with a killed worker: exit %d, want 1\n%s", code, out)
		}
		_, steps, err := store.ReadSweep(dir)
		if err != nil || len(steps) != 2 {
			t.Fatalf("%d steps (%v), want both: the sweep goes on\n%s", len(steps), err, out)
		}
		if f := steps[0].Failed; steps[0].Run != nil || !strings.Contains(f, "worker 1 (pod "+pod.Name+")") || !strings.Contains(f, "exit code 137") {
			t.Errorf("step 0: failed %q, want worker 1's pod and its exit code 137", f)
		}
		if steps[1].Run == nil || steps[1].Run.Summary.Requests == 0 {
			t.Errorf("step 1 after the failed one: %q", steps[1].Failed)
		}
		noneLeftOn(t, n.Client, ns)
	})

	t.Run("missing-image", func(t *testing.T) {
		// The workers load a server of the test's own (its image is
		// there); theirs is not, and cannot be pulled: 127.0.0.1:1 refuses.
		url := startEcho(t, n, "node-fail-echo")
		ns := "node-fail-image"
		sweep := writeNodeSweep(t, "ladder: c2t2,c4t2", "duration: 3s", fmt.Sprintf(`paths: [{name: echo, url: %q}]`, url))
		dir := filepath.Join(t.TempDir(), "results")
		start := time.Now()
		r := runLoadgen(t, bin, n.Kubeconfig, 4*time.Minute, "k8s", "run", "-n", ns, "-f", sweep, "--workers", "2", "-o", dir,
			"--image", "127.0.0.1:1/loadgen:missing", "--same-node-ok", "--start-lead", "5s", "--no-metrics", "--run-id", "img")
		if r.code != 1 {
			t.Fatalf("k8s run with a missing image: %v", r)
		}
		_, steps, err := store.ReadSweep(dir)
		if err != nil || len(steps) != 2 {
			t.Fatalf("%d steps (%v), want both: the sweep goes on\n%v", len(steps), err, r)
		}
		for _, st := range steps {
			f := st.Failed
			if st.Run != nil || !strings.Contains(f, "had not started by the start instant") ||
				!(strings.Contains(f, "ErrImagePull") || strings.Contains(f, "ImagePullBackOff")) || !strings.Contains(f, "127.0.0.1:1/loadgen:missing") {
				t.Errorf("step %s: failed %q, want the pod's image pull reason", st.ID, f)
			}
		}
		// Failed at the start instant, not held to the Job's deadline.
		if took := time.Since(start); took > 90*time.Second {
			t.Errorf("two steps of missing images took %v", took)
		}
		noneLeftOn(t, n.Client, ns)
	})

	t.Run("target-never-ready", func(t *testing.T) {
		// The pause image runs in every container: the target listens on
		// nothing, its readiness probes fail.
		ns := "node-fail-ready"
		sweep := writeNodeSweep(t, "ladder: c2t2", "duration: 3s",
			`paths: [{name: mesh, url: "http://target:8080"}, {name: direct, url: "http://target:8081", baseline: true}]`)
		dir := filepath.Join(t.TempDir(), "results")
		start := time.Now()
		r := runLoadgen(t, bin, n.Kubeconfig, 4*time.Minute, "k8s", "run", "-n", ns, "-f", sweep, "--workers", "1", "-o", dir,
			"--image", n.PauseImage, "--same-node-ok", "--start-lead", "5s", "--target-wait", "20s", "--no-metrics", "--run-id", "ready")
		if r.code != 1 {
			t.Fatalf("k8s run with a target that never gets ready: %v", r)
		}
		_, steps, err := store.ReadSweep(dir)
		if err != nil || len(steps) != 2 {
			t.Fatalf("%d steps (%v), want both recorded\n%v", len(steps), err, r)
		}
		for _, st := range steps {
			if f := st.Failed; st.Run != nil || !strings.Contains(f, "was not ready within 20s") || !strings.Contains(f, "pod "+k8s.TargetName) ||
				!strings.Contains(f, "Readiness probe failed") {
				t.Errorf("step %s: failed %q, want the target pod's readiness failure", st.ID, f)
			}
		}
		if took := time.Since(start); took > 2*time.Minute {
			t.Errorf("took %v: the target is waited for once, not per step", took)
		}
		noneLeftOn(t, n.Client, ns)
	})
}

// startLoadgen starts the CLI in the background with a kubeconfig.
func startLoadgen(t *testing.T, bin, kubeconfig string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	out := &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	return cmd, out
}

func waitExit(t *testing.T, cmd *exec.Cmd, out *bytes.Buffer, timeout time.Duration) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		t.Fatalf("loadgen did not end within %v:\n%s", timeout, out)
		return -1
	}
}

// waitWorkerRunning waits for a Job's worker of an index to run.
func waitWorkerRunning(t *testing.T, n *node.Node, ns, job string, index int) corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		l, err := n.Client.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + job})
		if err == nil {
			for _, p := range l.Items {
				if p.Annotations["batch.kubernetes.io/job-completion-index"] != strconv.Itoa(index) {
					continue
				}
				for _, s := range p.Status.ContainerStatuses {
					if s.Name == k8s.ContainerWorker && s.State.Running != nil {
						return p
					}
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("worker %d of Job %s/%s never ran", index, ns, job)
	return corev1.Pod{}
}

// killContainerProcess SIGKILLs the process of a pod whose command is cmd,
// found in the pod's cgroup on the node.
func killContainerProcess(t *testing.T, uid, cmd string) int {
	t.Helper()
	root := filepath.Join("/sys/fs/cgroup/pids", node.CgroupRoot, "kubepods")
	var dir string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == "pod"+uid {
			dir = p
		}
		return nil
	})
	if dir == "" {
		t.Fatalf("no cgroup of pod %s under %s", uid, root)
	}
	var pid int
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.Name() != "cgroup.procs" {
			return nil
		}
		b, _ := os.ReadFile(p)
		for _, f := range strings.Fields(string(b)) {
			id, _ := strconv.Atoi(f)
			if c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", id)); strings.HasPrefix(string(c), cmd+"\x00") {
				pid = id
			}
		}
		return nil
	})
	if pid == 0 {
		t.Fatalf("no %s process in pod %s's cgroups", cmd, uid)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	return pid
}

// startEcho runs `loadgen serve httpbin` as a Deployment and Service of
// the test's own in ns, and returns its URL (the Service's name).
func startEcho(t *testing.T, n *node.Node, ns string) string {
	t.Helper()
	ctx := context.Background()
	c := n.Client
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	labels := map[string]string{"app": "echo"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: ns},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{Containers: []corev1.Container{{
				Name: "httpbin", Image: n.Image, Args: []string{"serve", "httpbin", "--addr", "0.0.0.0:8080"},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt32(8080)}}},
			}}}},
		},
	}
	if _, err := c.AppsV1().Deployments(ns).Create(ctx, d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "echo", Namespace: ns},
		Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Name: "http", Port: 8080, TargetPort: intstr.FromInt32(8080)}}}}
	if _, err := c.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		got, err := c.AppsV1().Deployments(ns).Get(ctx, "echo", metav1.GetOptions{})
		if err == nil && got.Status.ReadyReplicas == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the echo server in %s never got ready", ns)
		}
		time.Sleep(300 * time.Millisecond)
	}
	return "http://echo." + ns + ".svc.cluster.local:8080"
}
