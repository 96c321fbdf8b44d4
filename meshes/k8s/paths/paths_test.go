package paths

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"loadgen/meshes/k8s"
)

func node(name string, unschedulable bool, taints ...corev1.TaintEffect) corev1.Node {
	n := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Unschedulable: unschedulable}}
	for _, e := range taints {
		n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "k", Effect: e})
	}
	return n
}

func TestSchedulableNodes(t *testing.T) {
	nodes := []corev1.Node{
		node("c", false),
		node("cordoned", true),
		node("control-plane", false, corev1.TaintEffectNoSchedule),
		node("a", false, corev1.TaintEffectPreferNoSchedule), // a preference: still schedulable
		node("not-ready", false, corev1.TaintEffectNoExecute),
		node("b", false),
	}
	if got, want := SchedulableNodes(nodes), []string{"a", "b", "c"}; !slices.Equal(got, want) {
		t.Errorf("SchedulableNodes = %v, want %v", got, want)
	}
	if _, err := NewPlan(Options{}, []corev1.Node{node("x", true), node("y", false, corev1.TaintEffectNoSchedule)}); err == nil ||
		!strings.Contains(err.Error(), "no schedulable node among the cluster's 2") {
		t.Errorf("no schedulable node: %v", err)
	}
}

// The plan's shape: every path × test, the cross-node rows only with two
// schedulable nodes, each repeat a full pass.
func TestPlanPathsShape(t *testing.T) {
	names := func(p *Plan) (measurable, not []string) {
		for _, s := range p.Paths {
			if s.Measurable() {
				measurable = append(measurable, s.Name)
			} else {
				not = append(not, s.Name+": "+s.NotMeasurable)
			}
		}
		return
	}
	one, err := NewPlan(Options{Repeats: 2}, []corev1.Node{node("only", false), node("cp", false, corev1.TaintEffectNoSchedule)})
	if err != nil {
		t.Fatal(err)
	}
	m, not := names(one)
	if want := []string{HostHost, PodPodSameNode, PodClusterIP, PodNodePort}; !slices.Equal(m, want) {
		t.Errorf("one node: measurable %v, want %v", m, want)
	}
	if want := []string{HostHostOther + ": " + NotMeasurableOneNode, PodPodOtherNode + ": " + NotMeasurableOneNode,
		PodClusterIPOther + ": " + NotMeasurableOneNode}; !slices.Equal(not, want) {
		t.Errorf("one node: not measurable %v, want %v", not, want)
	}
	if one.ServerNode != "only" || one.OtherNode != "" {
		t.Errorf("one node: server %q other %q", one.ServerNode, one.OtherNode)
	}
	ms := one.Measurements()
	if len(ms) != 2*4*4 {
		t.Fatalf("one node: %d measurements, want 2 repeats × 4 tests × 4 paths", len(ms))
	}
	// Repeats outermost, then tests, then paths; indexes in order.
	for i, x := range ms {
		if x.Index != i || x.Repeat != 1+i/16 || x.Test.Name != Tests[(i/4)%4].Name || x.Path.Name != m[i%4] {
			t.Fatalf("measurement %d: %+v", i, x)
		}
	}
	if ms[5].ID() != "pod-pod-same-node_c1t1_1KiB_closed_r1" || ms[31].ID() != "pod-nodeport_c4t1_1KiB_closed_r2" {
		t.Errorf("ids %s, %s", ms[5].ID(), ms[31].ID())
	}

	two, err := NewPlan(Options{}, []corev1.Node{node("n2", false), node("n1", false)})
	if err != nil {
		t.Fatal(err)
	}
	if m, not := names(two); !slices.Equal(m, PathNames) || len(not) != 0 {
		t.Errorf("two nodes: measurable %v, not %v", m, not)
	}
	if two.ServerNode != "n1" || two.OtherNode != "n2" || len(two.Measurements()) != DefaultRepeats*4*7 {
		t.Errorf("two nodes: server %q other %q, %d measurements", two.ServerNode, two.OtherNode, len(two.Measurements()))
	}
	for _, s := range two.Paths {
		wantBase := map[string]string{HostHost: "", HostHostOther: "", PodPodOtherNode: HostHostOther, PodClusterIPOther: HostHostOther}[s.Name]
		if s.Name != HostHost && s.Name != HostHostOther && s.Name != PodPodOtherNode && s.Name != PodClusterIPOther {
			wantBase = HostHost
		}
		if s.Baseline != wantBase {
			t.Errorf("%s: baseline %q, want %q", s.Name, s.Baseline, wantBase)
		}
	}
}

func TestPathsOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Duration: 500 * time.Millisecond}, "want 1s or more"},
		{Options{Duration: 2 * time.Hour}, "at most 1h"},
		{Options{Repeats: -1}, "repeats -1"},
		{Options{Repeats: 101}, "repeats 101"},
		{Options{Tolerance: -0.1}, "tolerance"},
		{Options{Tolerance: 1}, "below 100%"},
		{Options{Namespace: "Bad_NS"}, "namespace \"Bad_NS\""},
		{Options{RunID: strings.Repeat("r", 41)}, "at most 40"},
		{Options{}, ""},
	} {
		err := tc.o.Validate()
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%+v: %v, want %q", tc.o, err, tc.want)
		}
	}
}

// TestCheckSamples: the one rule of samples, which the CLI applies to
// what it is given (0 too: zero is Options' default, never the user's).
func TestCheckSamples(t *testing.T) {
	for _, tc := range []struct {
		d       time.Duration
		repeats int
		want    string
	}{
		{time.Second, 1, ""},
		{time.Hour, 100, ""},
		{0, 3, "duration 0s: want 1s or more per sample"},
		{999 * time.Millisecond, 3, "duration 999ms: want 1s or more per sample"},
		{time.Hour + 1, 3, "duration 1h0m0.000000001s: want at most 1h per sample"},
		{time.Second, 0, "repeats 0: want 1 to 100"},
		{time.Second, 101, "repeats 101: want 1 to 100"},
	} {
		err := CheckSamples(tc.d, tc.repeats)
		if got := fmt.Sprint(err); (tc.want == "") != (err == nil) || (err != nil && got != tc.want) {
			t.Errorf("CheckSamples(%v, %d) = %v, want %q", tc.d, tc.repeats, err, tc.want)
		}
	}
}

// Placement: servers on the first schedulable node, clients where their
// path says, hostNetwork where it is the node's network; each client
// dials what its path measures.
func TestPathsPlacementAndTargets(t *testing.T) {
	p, err := NewPlan(Options{Namespace: "lgp", RunID: "r1", Image: "img:1", Duration: 2 * time.Second},
		[]corev1.Node{node("b", false), node("a", false)})
	if err != nil {
		t.Fatal(err)
	}
	objs := p.Objects()
	if len(objs) != 5 {
		t.Fatalf("%d objects", len(objs))
	}
	ns := objs[0].(*corev1.Namespace)
	if ns.Name != "lgp" || ns.Labels[k8s.LabelCreated] != "true" || ns.Labels[k8s.LabelRun] != "r1" || ns.Labels[k8s.LabelManagedBy] != k8s.ManagedBy {
		t.Errorf("namespace %+v", ns.ObjectMeta)
	}
	host, pod := objs[1].(*corev1.Pod), objs[2].(*corev1.Pod)
	for _, sv := range []*corev1.Pod{host, pod} {
		if nodeOf(sv.Spec.Affinity) != "a" || sv.Labels[k8s.LabelRun] != "r1" || sv.Spec.ActiveDeadlineSeconds == nil ||
			*sv.Spec.SecurityContext.RunAsNonRoot != true || sv.Spec.Containers[0].Image != "img:1" {
			t.Errorf("server %s: %+v", sv.Name, sv.Spec)
		}
	}
	if !host.Spec.HostNetwork || pod.Spec.HostNetwork {
		t.Errorf("hostNetwork: host server %v, pod server %v", host.Spec.HostNetwork, pod.Spec.HostNetwork)
	}
	if got := strings.Join(host.Spec.Containers[1].Args, " "); got != "serve tcp --addr $(HOST_IP):19000" ||
		host.Spec.Containers[1].Env[0].ValueFrom.FieldRef.FieldPath != "status.hostIP" {
		t.Errorf("host tcp server: %s %+v", got, host.Spec.Containers[1].Env)
	}
	if got := strings.Join(pod.Spec.Containers[0].Args, " "); got != "serve httpbin --addr 0.0.0.0:8080" {
		t.Errorf("pod http server: %s", got)
	}
	svc := objs[4].(*corev1.Service)
	if svc.Spec.Type != corev1.ServiceTypeNodePort || svc.Spec.Selector[k8s.LabelComponent] != componentServer || svc.Spec.Ports[0].NodePort != 0 {
		t.Errorf("NodePort service %+v", svc.Spec)
	}

	ep := Endpoints{NodeIP: "198.18.64.1", PodIP: "198.18.65.7", ClusterIP: "198.18.112.20", NodePortTCP: 30900, NodePortHTTP: 30080}
	want := map[string]struct {
		node      string
		host      bool
		tcp, http string
	}{
		HostHost:        {"a", true, "198.18.64.1:19000", "http://198.18.64.1:18080/bytes/1024"},
		PodPodSameNode:  {"a", false, "198.18.65.7:9000", "http://198.18.65.7:8080/bytes/1024"},
		PodClusterIP:    {"a", false, "198.18.112.20:9000", "http://198.18.112.20:8080/bytes/1024"},
		PodNodePort:     {"a", false, "198.18.64.1:30900", "http://198.18.64.1:30080/bytes/1024"},
		HostHostOther:   {"b", true, "198.18.64.1:19000", "http://198.18.64.1:18080/bytes/1024"},
		PodPodOtherNode: {"b", false, "198.18.65.7:9000", "http://198.18.65.7:8080/bytes/1024"},
		// The ClusterIP from the other node: its endpoint is the server pod on a.
		PodClusterIPOther: {"b", false, "198.18.112.20:9000", "http://198.18.112.20:8080/bytes/1024"},
	}
	seen := map[string]bool{}
	for _, m := range p.Measurements() {
		if m.Repeat > 1 {
			break
		}
		w := want[m.Path.Name]
		job := p.ClientJob(m, ep)
		spec := job.Spec.Template.Spec
		args := spec.Containers[0].Args
		dial := w.tcp
		if m.Test.Name == TestHTTP {
			dial = w.http
		}
		if nodeOf(spec.Affinity) != w.node || spec.HostNetwork != w.host || args[len(args)-1] != dial {
			t.Errorf("%s %s: node %s host %v args %v, want %s %v %s", m.Path.Name, m.Test.Name, nodeOf(spec.Affinity), spec.HostNetwork, args, w.node, w.host, dial)
		}
		if job.Labels[LabelPath] != m.Path.Name || job.Spec.Template.Labels[LabelTest] != m.Test.Name || job.Labels[k8s.LabelRun] != "r1" ||
			*job.Spec.Completions != 1 || *job.Spec.BackoffLimit != 0 || job.Spec.ActiveDeadlineSeconds == nil {
			t.Errorf("%s: job %+v", job.Name, job.ObjectMeta)
		}
		i := slices.Index(args, "--")
		if i < 1 || args[i-1] != "--clock=" || args[i+1] != "run" || !slices.Contains(args, "--connections") {
			t.Errorf("%s: worker args %v", job.Name, args)
		}
		wantRun := []string{"-q", "-d", "2s", "-p", m.Test.Protocol, "--size", "1024"}
		if m.Test.Name == TestHTTP {
			wantRun = []string{"-q", "-d", "2s"}
		}
		if got := args[i+2 : len(args)-1]; !slices.Equal(got, wantRun) {
			t.Errorf("%s: run args %v, want %v", job.Name, got, wantRun)
		}
		if c := args[slices.Index(args, "--connections")+1]; c != map[bool]string{true: "4", false: "1"}[m.Test.Name == TestHTTP] {
			t.Errorf("%s: %s connections", job.Name, c)
		}
		seen[m.Path.Name+" "+m.Test.Name] = true
	}
	if len(seen) != 7*4 {
		t.Errorf("%d path × test in a repeat, want 28", len(seen))
	}
}

// --paths and --tests: only those, and the hostNetwork rows the pod
// paths' ratios are to.
func TestPlanSubset(t *testing.T) {
	two := []corev1.Node{node("a", false), node("b", false)}
	p, err := NewPlan(Options{Paths: []string{PodPodOtherNode, PodClusterIPOther}, Tests: []string{TestTCPRR, TestTCPStream}, Repeats: 1}, two)
	if err != nil {
		t.Fatal(err)
	}
	var paths, tests []string
	for _, s := range p.Paths {
		paths = append(paths, s.Name)
	}
	for _, s := range p.Tests {
		tests = append(tests, s.Name)
	}
	if !slices.Equal(paths, []string{HostHostOther, PodPodOtherNode, PodClusterIPOther}) || !slices.Equal(tests, []string{TestTCPStream, TestTCPRR}) {
		t.Errorf("paths %v, tests %v", paths, tests)
	}
	if n := len(p.Measurements()); n != 3*2 {
		t.Errorf("%d measurements, want 3 paths × 2 tests", n)
	}
	// An iperf-style stream: 128 KiB writes for TCP_STREAM only.
	p, err = NewPlan(Options{Paths: []string{PodPodOtherNode}, StreamSize: 128 << 10, Repeats: 1}, two)
	if err != nil {
		t.Fatal(err)
	}
	ep := Endpoints{PodIP: "198.18.80.5"}
	for _, m := range p.Measurements() {
		args := strings.Join(p.RunArgs(m, ep), " ")
		want, id := "--size 1024", "_1KiB_"
		if m.Test.Name == TestTCPStream {
			want, id = "--size 131072", "_128KiB_"
		}
		if !strings.Contains(args, want) && m.Test.Name != TestHTTP || !strings.Contains(m.ID(), id) {
			t.Errorf("%s %s: %s, %s", m.Path.Name, m.Test.Name, args, m.ID())
		}
	}
	if err := (Options{StreamSize: -1}).Validate(); err == nil {
		t.Error("a negative stream size: no error")
	}
	for _, o := range []Options{{Paths: []string{"pod-pod"}}, {Tests: []string{"sctp-rr"}}} {
		if err := o.Validate(); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// The Flannel backend is read from the nodes' annotations, and must be
// the same on every schedulable node.
func TestFlannelBackend(t *testing.T) {
	fl := func(name, backend string) corev1.Node {
		n := node(name, false)
		if backend != "" {
			n.Annotations = map[string]string{FlannelBackendAnnotation: backend}
		}
		return n
	}
	udp := func(name string) corev1.Node {
		n := node(name, false)
		n.Annotations = map[string]string{FlannelBackendAnnotation: "", flannelManagedAnnotation: "true"}
		return n
	}
	names := []string{"a", "b"}
	for _, tc := range []struct {
		nodes []corev1.Node
		want  string
		err   string
	}{
		{[]corev1.Node{fl("a", "vxlan"), fl("b", "vxlan"), fl("cp", "host-gw")}, "vxlan", ""},
		{[]corev1.Node{fl("a", ""), fl("b", "")}, "", ""},
		{[]corev1.Node{fl("a", "vxlan"), fl("b", "udp")}, "", "udp on [b], vxlan on [a]"},
		{[]corev1.Node{fl("a", "vxlan"), fl("b", "")}, "", "no Flannel on [b], vxlan on [a]"},
		// The udp backend publishes an empty type.
		{[]corev1.Node{udp("a"), udp("b")}, "udp", ""},
	} {
		got, err := FlannelBackend(tc.nodes, names)
		if got != tc.want || (tc.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%v: %q, %v; want %q, %q", tc.nodes, got, err, tc.want, tc.err)
		}
	}
}

// The dry run prints the plan and objects the API server's strict
// decoding accepts, with no cluster.
func TestPathsDryRun(t *testing.T) {
	var b bytes.Buffer
	if err := DryRun(&b, Options{Namespace: "lgp-x", RunID: "r9", Image: "loadgen.local/loadgen:1", Duration: 2 * time.Second, Repeats: 2, Tolerance: 0.1}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"# loadgen k8s paths r9 (dry run): namespace lgp-x, image loadgen.local/loadgen:1",
		"# 2 repeats × 2s per path × test, 1024 B messages; tolerance 10% below hostNetwork",
		"host-host                hostNetwork client on NODE-A → NODE-A-IP:19000, http://NODE-A-IP:18080/bytes/1024 (the baseline)",
		"pod-nodeport             pod on NODE-A → NODE-A-IP:NODEPORT-TCP",
		"pod-pod-other-node       pod on NODE-B → SERVER-POD-IP:9000, http://SERVER-POD-IP:8080/bytes/1024 (ratio to host-host-other-node)",
		"pod-clusterip-other-node pod on NODE-B → CLUSTER-IP:9000",
		"# 56 measurements with two nodes (32 with one)",
		"not measurable here: one schedulable node",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	objs, err := k8s.DecodeStrict(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range objs {
		kinds = append(kinds, o.GetObjectKind().GroupVersionKind().Kind)
	}
	if want := []string{"Namespace", "Pod", "Pod", "Service", "Service", "Job"}; !slices.Equal(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	if job := objs[5].(*batchv1.Job); !job.Spec.Template.Spec.HostNetwork || !strings.HasSuffix(strings.Join(job.Spec.Template.Spec.Containers[0].Args, " "), "-p tcp-stream --size 1024 NODE-A-IP:19000") {
		t.Errorf("first Job: %v", job.Spec.Template.Spec.Containers[0].Args)
	}
	if err := DryRun(&b, Options{Repeats: -3}); err == nil {
		t.Error("bad options: no error")
	}
}

// nodeOf is the node a required node affinity names.
func nodeOf(a *corev1.Affinity) string {
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return ""
	}
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, f := range t.MatchFields {
			if f.Key == "metadata.name" && len(f.Values) == 1 {
				return f.Values[0]
			}
		}
	}
	return ""
}

// A plan of cross-node paths only names host-host-other-node its
// results' baseline.
func TestBaselinePath(t *testing.T) {
	two := []corev1.Node{node("a", false), node("b", false)}
	for _, c := range []struct {
		paths []string
		want  string
	}{{nil, HostHost}, {[]string{PodPodOtherNode}, HostHostOther}, {[]string{PodPodSameNode, PodPodOtherNode}, HostHost}} {
		p, err := NewPlan(Options{Paths: c.paths}, two)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.BaselinePath(); got != c.want {
			t.Errorf("%v: baseline %q, want %q", c.paths, got, c.want)
		}
	}
}

// TestPathsKindsRendered checks that the kinds the permissions table grants a
// paths run (k8s.PathsKinds) are the kinds its plan applies, less its
// namespace.
func TestPathsKindsRendered(t *testing.T) {
	p, err := planOn(Options{}, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	us, err := k8s.ToUnstructured(p.Objects()...)
	if err != nil {
		t.Fatal(err)
	}
	var got []schema.GroupVersionKind
	for _, u := range us {
		if gvk := u.GroupVersionKind(); gvk.Kind != "Namespace" && !slices.Contains(got, gvk) {
			got = append(got, gvk)
		}
	}
	if !slices.Equal(got, k8s.PathsKinds) {
		t.Errorf("the plan applies %v, the permissions table grants %v", got, k8s.PathsKinds)
	}
}

// UDP_STREAM and UDP_RR, asked by name: the servers serve UDP on ports of
// their own, the Services carry a UDP port, and each path dials it.
func TestPathsUDP(t *testing.T) {
	two := []corev1.Node{node("a", false), node("b", false)}
	def, err := NewPlan(Options{Repeats: 1}, two)
	if err != nil {
		t.Fatal(err)
	}
	for _, ts := range def.Tests {
		if ts.UDP() {
			t.Errorf("the default plan runs %s: UDP is asked by name", ts.Name)
		}
	}
	p, err := NewPlan(Options{Tests: []string{TestUDPStream, TestUDPRR}, Repeats: 1, Duration: 2 * time.Second}, two)
	if err != nil {
		t.Fatal(err)
	}
	objs := p.Objects()
	for i, want := range map[int]string{1: "serve udp --addr $(HOST_IP):19002", 2: "serve udp --addr 0.0.0.0:9002"} {
		pod := objs[i].(*corev1.Pod)
		var found bool
		for _, c := range pod.Spec.Containers {
			if strings.Join(c.Args, " ") == want {
				found = c.Ports[0].Protocol == corev1.ProtocolUDP && c.ReadinessProbe == nil
			}
		}
		if !found {
			t.Errorf("%s: no container %q with a UDP port and no probe", pod.Name, want)
		}
	}
	for _, o := range objs[3:] {
		svc := o.(*corev1.Service)
		if !slices.ContainsFunc(svc.Spec.Ports, func(sp corev1.ServicePort) bool {
			return sp.Port == k8s.PortUDP && sp.Protocol == corev1.ProtocolUDP && sp.TargetPort.IntValue() == k8s.PortUDP
		}) {
			t.Errorf("Service %s has no UDP port %d: %+v", svc.Name, k8s.PortUDP, svc.Spec.Ports)
		}
	}
	ep := Endpoints{NodeIP: "198.18.64.1", PodIP: "198.18.65.7", ClusterIP: "198.18.112.20", NodePortTCP: 30900, NodePortHTTP: 30080, NodePortUDP: 30902}
	want := map[string]string{
		HostHost: "198.18.64.1:19002", PodPodSameNode: "198.18.65.7:9002", PodClusterIP: "198.18.112.20:9002", PodNodePort: "198.18.64.1:30902",
		HostHostOther: "198.18.64.1:19002", PodPodOtherNode: "198.18.65.7:9002", PodClusterIPOther: "198.18.112.20:9002",
	}
	n := 0
	for _, m := range p.Measurements() {
		args := p.RunArgs(m, ep)
		got := strings.Join(args, " ")
		if args[len(args)-1] != want[m.Path.Name] || !strings.Contains(got, "-p "+m.Test.Protocol+" --size 1024") {
			t.Errorf("%s %s: run %s, want the target %s", m.Path.Name, m.Test.Name, got, want[m.Path.Name])
		}
		n++
	}
	if n != 7*2 {
		t.Errorf("%d measurements, want 7 paths × 2 UDP tests", n)
	}
}
