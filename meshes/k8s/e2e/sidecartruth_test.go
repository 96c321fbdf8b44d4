package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"loadgen/meshes/caddy"
	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/e2e/node"
)

// What the node itself says about a run's pods while it runs, the
// ground truth the run's figures are checked against: each container's
// cgroup (cpuacct.usage), and each proxy's own request counter, read in
// its pod's network namespace (HAProxy's stats, nginx's stub_status,
// Caddy's metrics, on the admin listener 127.0.0.1:15000).

// containerKey names one container of one pod.
type containerKey struct{ pod, container string }

// counterSample is a proxy's request count at an instant.
type counterSample struct {
	at time.Time
	n  int64
}

// podInfo is what the observer saw of a pod.
type podInfo struct {
	name   string
	labels map[string]string
	target bool
	step   string // a worker's step index
}

// observer polls a namespace's pods.
type observer struct {
	c         kubernetes.Interface
	ns        string
	proxy     string // the proxy container's name
	counter   string // how its requests are counted: haproxy, nginx, caddy; "" none
	mu        sync.Mutex
	cpu       map[containerKey][]cgSample
	finished  map[containerKey]time.Time // when the kubelet says a container ended
	requests  map[string][]counterSample // by pod
	reads     map[string]int64           // nginx: stub_status counts its own reads
	pods      map[string]podInfo
	readErrs  map[string]string
	stop      chan struct{}
	done      chan struct{}
	lastCount map[string]time.Time
}

func observe(c kubernetes.Interface, ns, proxyContainer, counter string) *observer {
	o := &observer{c: c, ns: ns, proxy: proxyContainer, counter: counter, cpu: map[containerKey][]cgSample{},
		finished: map[containerKey]time.Time{}, requests: map[string][]counterSample{}, reads: map[string]int64{}, pods: map[string]podInfo{}, readErrs: map[string]string{},
		stop: make(chan struct{}), done: make(chan struct{}), lastCount: map[string]time.Time{}}
	go o.loop()
	return o
}

// Stop ends the polling.
func (o *observer) Stop() {
	close(o.stop)
	<-o.done
}

func (o *observer) loop() {
	defer close(o.done)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-o.stop:
			return
		case <-tick.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		l, err := o.c.CoreV1().Pods(o.ns).List(ctx, metav1.ListOptions{})
		cancel()
		if err != nil {
			continue
		}
		for i := range l.Items {
			o.sample(&l.Items[i])
		}
		// The machine's root cgroup: the node's own figure (the kubelet's
		// cAdvisor "/", what metrics-server and id="/" report).
		if s, ok := readCgroup("/"); ok {
			o.mu.Lock()
			o.cpu[nodeKey] = append(o.cpu[nodeKey], s)
			o.mu.Unlock()
		}
	}
}

// nodeKey holds the root cgroup's samples among the containers'.
var nodeKey = containerKey{pod: "/", container: "/"}

// sample reads every running container's cgroup and, every half second,
// the proxy's counter: at every poll once the pod's app has ended (a
// worker's, whose proxy the kubelet stops soon after), so that a reading
// after the last request is likely.
func (o *observer) sample(p *corev1.Pod) {
	info := podInfo{name: p.Name, labels: p.Labels, target: p.Labels[k8s.LabelName] == k8s.TargetName, step: p.Labels["loadgen.dev/step"]}
	o.mu.Lock()
	o.pods[p.Name] = info
	o.mu.Unlock()
	ended := false
	for _, st := range p.Status.ContainerStatuses {
		if st.Name != o.proxy && st.State.Terminated != nil {
			ended = true
		}
	}
	for _, st := range append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...) {
		if t := st.State.Terminated; t != nil && !t.FinishedAt.IsZero() {
			o.mu.Lock()
			o.finished[containerKey{p.Name, st.Name}] = t.FinishedAt.Time
			o.mu.Unlock()
		}
		if st.State.Running == nil || st.ContainerID == "" {
			continue
		}
		cg := ctrCgroup(p, st.ContainerID)
		s, ok := readCgroup(cg)
		if !ok {
			continue
		}
		o.mu.Lock()
		k := containerKey{p.Name, st.Name}
		o.cpu[k] = append(o.cpu[k], s)
		due := st.Name == o.proxy && o.counter != "" && (ended || time.Since(o.lastCount[p.Name]) >= 450*time.Millisecond)
		if due {
			o.lastCount[p.Name] = time.Now()
		}
		o.mu.Unlock()
		if due {
			o.count(p.Name, cg)
		}
	}
}

// count reads a proxy's request counter in its pod's network namespace.
func (o *observer) count(pod, cg string) {
	pid, err := firstPID(cg)
	if err == nil {
		var n int64
		at := time.Now()
		n, err = readCounter(pid, o.counter)
		if err == nil {
			o.mu.Lock()
			if o.counter == k8s.ProxyNginx {
				o.reads[pod]++
				n -= o.reads[pod] // stub_status counts the read itself, and the ones before
			}
			o.requests[pod] = append(o.requests[pod], counterSample{at, n})
			o.mu.Unlock()
			return
		}
	}
	o.mu.Lock()
	o.readErrs[pod] = err.Error()
	o.mu.Unlock()
}

// ctrCgroup is a container's cgroup directory, relative to the
// cpuacct hierarchy (the memory one has the same path).
func ctrCgroup(p *corev1.Pod, containerID string) string {
	qos := ""
	switch p.Status.QOSClass {
	case corev1.PodQOSBestEffort:
		qos = "besteffort"
	case corev1.PodQOSBurstable:
		qos = "burstable"
	}
	_, id, _ := strings.Cut(containerID, "://")
	return filepath.Join("/", node.CgroupRoot, "kubepods", qos, "pod"+string(p.UID), id)
}

func firstPID(cg string) (int, error) {
	b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/cpuacct", cg, "cgroup.procs"))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0, fmt.Errorf("no process in %s", cg)
	}
	return strconv.Atoi(f[0])
}

// readCounter asks the proxy of pid's network namespace for its request
// count: HAProxy's inbound and outbound frontends' req_tot (its stats
// page), nginx's stub_status requests, Caddy's inbound and outbound
// servers' caddy_http_requests_total (its admin API's /metrics, with the
// HTTP metrics k8s.SidecarConfig turns on).
func readCounter(pid int, proxy string) (int64, error) {
	var path string
	switch proxy {
	case k8s.ProxyHAProxy:
		path = "/stats;csv"
	case k8s.ProxyNginx:
		path = "/stats"
	case k8s.ProxyCaddy:
		path = caddy.MetricsPath
	default:
		return 0, fmt.Errorf("no counter for %s", proxy)
	}
	body, err := getIn(pid, "http://127.0.0.1:15000"+path)
	if err != nil {
		return 0, err
	}
	switch proxy {
	case k8s.ProxyHAProxy:
		return haproxyRequests(body)
	case k8s.ProxyNginx:
		return nginxRequests(body)
	}
	return caddy.MetricsRequests(strings.NewReader(body))
}

// getIn makes an HTTP GET from inside pid's network namespace.
func getIn(pid int, url string) (string, error) {
	tr := &http.Transport{DisableKeepAlives: true, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return dialIn(ctx, pid, network, addr)
	}}
	c := &http.Client{Transport: tr, Timeout: 3 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return "", fmt.Errorf("%s: %s", url, resp.Status)
	}
	return string(b), err
}

// dialIn connects from pid's network namespace: the socket is made on a
// thread that has entered it, which then goes back to ours.
func dialIn(ctx context.Context, pid int, network, addr string) (net.Conn, error) {
	type res struct {
		c   net.Conn
		err error
	}
	ch := make(chan res, 1)
	go func() {
		runtime.LockOSThread()
		home, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			ch <- res{nil, err}
			return
		}
		defer unix.Close(home)
		target, err := unix.Open(fmt.Sprintf("/proc/%d/ns/net", pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			ch <- res{nil, err}
			return
		}
		defer unix.Close(target)
		if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- res{nil, err}
			return
		}
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if serr := unix.Setns(home, unix.CLONE_NEWNET); serr != nil {
			ch <- res{c, err}
			return // still locked: the runtime retires the thread
		}
		runtime.UnlockOSThread()
		ch <- res{c, err}
	}()
	r := <-ch
	return r.c, r.err
}

// haproxyRequests sums req_tot of the inbound and outbound frontends (the
// admin frontend's own requests, this read among them, left out).
func haproxyRequests(csv string) (int64, error) {
	sc := bufio.NewScanner(strings.NewReader(csv))
	var col map[string]int
	var total int64
	found := 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "# ") {
			col = map[string]int{}
			for i, h := range strings.Split(strings.TrimPrefix(line, "# "), ",") {
				col[h] = i
			}
			continue
		}
		f := strings.Split(line, ",")
		if col == nil || len(f) <= col["req_tot"] || f[col["svname"]] != "FRONTEND" {
			continue
		}
		if px := f[col["pxname"]]; px != "inbound" && px != "outbound" {
			continue
		}
		n, err := strconv.ParseInt(f[col["req_tot"]], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("haproxy stats: req_tot %q", f[col["req_tot"]])
		}
		total += n
		found++
	}
	if found != 2 {
		return 0, fmt.Errorf("haproxy stats: %d of the inbound and outbound frontends", found)
	}
	return total, nil
}

// nginxRequests reads stub_status's requests ("server accepts handled
// requests" then the three numbers).
func nginxRequests(s string) (int64, error) {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.Contains(l, "accepts handled requests") && i+1 < len(lines) {
			if f := strings.Fields(lines[i+1]); len(f) == 3 {
				return strconv.ParseInt(f[2], 10, 64)
			}
		}
	}
	return 0, fmt.Errorf("stub_status: no requests in %q", s)
}

// cpuTruth is the CPU cores the containers keys used over [from, to], in
// all: each container's counter at both ends, between its two nearest
// samples, or its last before a container that ended (a worker's proxy
// goes with its pod) and its first after one that began.
func (o *observer) cpuTruth(keys []containerKey, from, to time.Time) (float64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var used float64
	for _, k := range keys {
		ss := o.cpu[k]
		// A container that ended before the window (an init container:
		// linkerd-init, istio-init) used none of it, however few times a
		// poll caught it running. FinishedAt is kept to the second, so
		// a second's margin.
		if fin, ok := o.finished[k]; ok && fin.Add(time.Second).Before(from) {
			continue
		}
		if len(ss) < 2 {
			return 0, fmt.Errorf("%d cgroup samples of %s/%s", len(ss), k.pod, k.container)
		}
		at := func(t time.Time) float64 {
			switch {
			case !t.After(ss[0].at):
				return ss[0].usage
			case !t.Before(ss[len(ss)-1].at):
				return ss[len(ss)-1].usage
			}
			for i := 1; i < len(ss); i++ {
				if !ss[i].at.Before(t) {
					a, b := ss[i-1], ss[i]
					f := float64(t.Sub(a.at)) / float64(b.at.Sub(a.at))
					return a.usage + f*(b.usage-a.usage)
				}
			}
			return ss[len(ss)-1].usage
		}
		if ss[0].at.After(from.Add(2*time.Second)) && ss[0].usage > 0.05 {
			return 0, fmt.Errorf("%s/%s: first sampled %v after the window began, %.2f s of CPU already used", k.pod, k.container, ss[0].at.Sub(from), ss[0].usage)
		}
		used += at(to) - at(from)
	}
	return used / to.Sub(from).Seconds(), nil
}

// keys are the containers of the pods sel picks, named as names picks.
func (o *observer) keys(sel func(podInfo) bool, names func(string) bool) []containerKey {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []containerKey
	for k := range o.cpu {
		if p, ok := o.pods[k.pod]; ok && sel(p) && names(k.container) {
			out = append(out, k)
		}
	}
	return out
}

// delta is what a pod's proxy counted between two instants: its last
// reading at or before from (0 before its first), and its first at or
// after to (its last, for a pod gone by then).
func (o *observer) delta(pod string, from, to time.Time) (int64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	ss := o.requests[pod]
	if len(ss) == 0 {
		return 0, false
	}
	var a int64
	b := ss[len(ss)-1].n
	for _, s := range ss {
		if !s.at.After(from) {
			a = s.n
		}
	}
	for i := len(ss) - 1; i >= 0; i-- {
		if !ss[i].at.Before(to) {
			b = ss[i].n
		}
	}
	return b - a, true
}

// lastRead is when a pod's proxy counter was last read; zero if never.
func (o *observer) lastRead(pod string) time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	ss := o.requests[pod]
	if len(ss) == 0 {
		return time.Time{}
	}
	return ss[len(ss)-1].at
}

// hasContainer reports whether a pod was seen running a container so
// named.
func (o *observer) hasContainer(pod, container string) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.cpu[containerKey{pod, container}]) > 0
}
