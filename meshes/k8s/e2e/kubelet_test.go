package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"loadgen/targets/tlscert"
)

// kubelet plays a node's kubelet for the tests: it binds the pods loadgen
// creates to its node (there is no scheduler), runs each container's
// command as a local process of the real loadgen binary, reports the
// pods' status to the API server, and serves their logs over HTTPS to the
// API server (pods/log) as a kubelet does.
type kubelet struct {
	t      *testing.T
	c      *cluster
	node   string
	binary string
	// delay holds back the start of worker 1 of chosen Jobs (Job name →
	// delay), to make a worker late.
	delay map[string]time.Duration
	// stuck never starts worker 1 of chosen Jobs (Job name → waiting
	// reason), as a kubelet that cannot pull the image.
	stuck map[string]string
	// images run another binary for pods of these images (image →
	// binary): a worker image of another loadgen.
	images map[string]string

	mu      sync.Mutex
	logs    map[string]*bytes.Buffer // ns/pod/container
	started map[string]bool
	procs   map[string]*exec.Cmd
}

func startKubelet(t *testing.T, ctx context.Context, c *cluster, binary string, delay map[string]time.Duration, stuck map[string]string) *kubelet {
	t.Helper()
	k := &kubelet{t: t, c: c, node: "e2e-node", binary: binary, delay: delay, stuck: stuck,
		logs: map[string]*bytes.Buffer{}, started: map[string]bool{}, procs: map[string]*exec.Cmd{}}
	port := k.serveLogs(ctx)
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: k.node, Labels: map[string]string{"kubernetes.io/hostname": k.node}},
		Status: corev1.NodeStatus{
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(port)}},
			Conditions:      []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.Now()}},
		},
	}
	n, err := c.Client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Status = node.Status
	if _, err := c.Client.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	go k.loop(ctx)
	t.Cleanup(k.killAll)
	return k
}

// serveLogs serves /containerLogs/{ns}/{pod}/{container} on loopback with
// a self-signed certificate (the API server does not verify a kubelet's
// certificate unless told a CA).
func (k *kubelet) serveLogs(ctx context.Context) int {
	cert, err := tlscert.New(tlscert.ECDSAP256, "127.0.0.1")
	if err != nil {
		k.t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		k.t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/containerLogs/{ns}/{pod}/{container}", func(w http.ResponseWriter, r *http.Request) {
		key := r.PathValue("ns") + "/" + r.PathValue("pod") + "/" + r.PathValue("container")
		k.mu.Lock()
		b, ok := k.logs[key]
		var data []byte
		if ok {
			data = append([]byte(nil), b.Bytes()...)
		}
		k.mu.Unlock()
		if !ok {
			http.Error(w, "no such container", http.StatusNotFound)
			return
		}
		if n, err := strconv.Atoi(r.URL.Query().Get("tailLines")); err == nil {
			lines := strings.SplitAfter(string(data), "\n")
			if lines[len(lines)-1] == "" {
				lines = lines[:len(lines)-1]
			}
			if len(lines) > n {
				lines = lines[len(lines)-n:]
			}
			data = []byte(strings.Join(lines, ""))
		}
		if n, err := strconv.Atoi(r.URL.Query().Get("limitBytes")); err == nil && n < len(data) {
			data = data[:n]
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(data)
	})
	srv := &http.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert.TLS}}}
	go func() { _ = srv.ServeTLS(ln, "", "") }()
	go func() { <-ctx.Done(); srv.Close() }()
	return ln.Addr().(*net.TCPAddr).Port
}

// loop binds, starts and deletes pods as their state asks, until ctx ends.
func (k *kubelet) loop(ctx context.Context) {
	for ctx.Err() == nil {
		pods, err := k.c.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err == nil {
			for i := range pods.Items {
				k.handle(ctx, &pods.Items[i])
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (k *kubelet) handle(ctx context.Context, p *corev1.Pod) {
	cs := k.c.Client
	key := p.Namespace + "/" + p.Name
	switch {
	case p.DeletionTimestamp != nil:
		// Graceful deletion waits for the kubelet: stop and confirm.
		k.kill(key)
		zero := int64(0)
		_ = cs.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
	case p.Spec.NodeName == "":
		b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: p.Name, Namespace: p.Namespace, UID: p.UID},
			Target: corev1.ObjectReference{Kind: "Node", Name: k.node}}
		_ = cs.CoreV1().Pods(p.Namespace).Bind(ctx, b, metav1.CreateOptions{})
	case p.Spec.NodeName == k.node && p.Status.Phase == corev1.PodPending && strings.HasPrefix(p.Namespace, "e2e-"):
		// Only the runs' pods: the validation test's client Jobs would
		// look up cluster DNS names this machine has no answer for.
		k.mu.Lock()
		if k.started[key] {
			k.mu.Unlock()
			return
		}
		k.started[key] = true
		k.mu.Unlock()
		go k.run(ctx, p.DeepCopy())
	}
}

// run runs the pod's one container as a process of the loadgen binary.
func (k *kubelet) run(ctx context.Context, p *corev1.Pod) {
	job, index := p.Labels["batch.kubernetes.io/job-name"], p.Annotations["batch.kubernetes.io/job-completion-index"]
	if d, ok := k.delay[job]; ok && index == "1" {
		time.Sleep(d)
	}
	c := p.Spec.Containers[0]
	if reason, ok := k.stuck[job]; ok && index == "1" {
		k.waiting(ctx, p, c.Name, reason)
		return
	}
	key := p.Namespace + "/" + p.Name
	logKey := key + "/" + c.Name
	bin := k.binary
	k.mu.Lock()
	if b, ok := k.images[c.Image]; ok {
		bin = b
	}
	k.mu.Unlock()
	cmd := exec.Command(bin, c.Args...) // the image's entrypoint is /loadgen
	cmd.Env = append(podEnv(p, c), "KUBERNETES_SERVICE_HOST="+k.c.Host, "KUBERNETES_SERVICE_PORT="+k.c.Port, "HOME=/tmp", "PATH=/usr/bin:/bin")
	buf := &syncBuffer{mu: &k.mu}
	k.mu.Lock()
	k.logs[logKey] = &buf.b
	k.mu.Unlock()
	cmd.Stdout, cmd.Stderr = buf, buf
	started := metav1.Now()
	if err := cmd.Start(); err != nil {
		k.status(ctx, p, corev1.PodFailed, c.Name, &corev1.ContainerStateTerminated{ExitCode: 127, Reason: "StartError", Message: err.Error()})
		return
	}
	k.mu.Lock()
	k.procs[key] = cmd
	k.mu.Unlock()
	k.status(ctx, p, corev1.PodRunning, c.Name, nil, started)
	err := cmd.Wait()
	code := 0
	if err != nil {
		code = 1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
	}
	phase, reason := corev1.PodSucceeded, "Completed"
	if code != 0 {
		phase, reason = corev1.PodFailed, "Error"
	}
	k.status(ctx, p, phase, c.Name, &corev1.ContainerStateTerminated{ExitCode: int32(code), Reason: reason,
		StartedAt: started, FinishedAt: metav1.Now()})
}

// podEnv resolves the container's environment: values, and the pod
// annotations the Job controller refers to (JOB_COMPLETION_INDEX).
func podEnv(p *corev1.Pod, c corev1.Container) []string {
	var env []string
	for _, e := range c.Env {
		v := e.Value
		if f := e.ValueFrom; f != nil && f.FieldRef != nil {
			path := f.FieldRef.FieldPath
			if strings.HasPrefix(path, "metadata.annotations['") {
				v = p.Annotations[strings.TrimSuffix(strings.TrimPrefix(path, "metadata.annotations['"), "']")]
			} else if strings.HasPrefix(path, "metadata.labels['") {
				v = p.Labels[strings.TrimSuffix(strings.TrimPrefix(path, "metadata.labels['"), "']")]
			} else if path == "metadata.name" {
				v = p.Name
			}
		}
		env = append(env, e.Name+"="+v)
	}
	return env
}

func (k *kubelet) status(ctx context.Context, p *corev1.Pod, phase corev1.PodPhase, container string, term *corev1.ContainerStateTerminated, started ...metav1.Time) {
	st := corev1.ContainerStatus{Name: container, Image: p.Spec.Containers[0].Image, Ready: phase == corev1.PodRunning}
	switch {
	case term != nil:
		st.State.Terminated = term
	default:
		st.State.Running = &corev1.ContainerStateRunning{StartedAt: started[0]}
	}
	for try := 0; try < 20; try++ {
		cur, err := k.c.Client.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
		if err != nil {
			return
		}
		cur.Status.Phase = phase
		cur.Status.HostIP, cur.Status.PodIP = "127.0.0.1", "127.0.0.1"
		cur.Status.ContainerStatuses = []corev1.ContainerStatus{st}
		if cur.Status.StartTime == nil {
			now := metav1.Now()
			cur.Status.StartTime = &now
		}
		if _, err := k.c.Client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waiting reports the container as waiting, for good.
func (k *kubelet) waiting(ctx context.Context, p *corev1.Pod, container, reason string) {
	cur, err := k.c.Client.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
	if err != nil {
		return
	}
	cur.Status.Phase = corev1.PodPending
	cur.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: container, Image: p.Spec.Containers[0].Image,
		State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason,
			Message: fmt.Sprintf("Back-off pulling image %q", p.Spec.Containers[0].Image)}}}}
	_, _ = k.c.Client.CoreV1().Pods(p.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
}

func (k *kubelet) kill(key string) {
	k.mu.Lock()
	cmd := k.procs[key]
	k.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

func (k *kubelet) killAll() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, cmd := range k.procs {
		if cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
	}
}

// logsOf returns every log of containers named container in ns.
func (k *kubelet) logsOf(ns, container string) map[string]string {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := map[string]string{}
	for key, b := range k.logs {
		parts := strings.Split(key, "/")
		if parts[0] == ns && parts[2] == container {
			out[parts[1]] = b.String()
		}
	}
	return out
}

// syncBuffer is a log written by a process and read by the log server.
type syncBuffer struct {
	mu *sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
