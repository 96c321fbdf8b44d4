// Package paths is `loadgen k8s paths`: the paths k8s-netperf measures,
// with loadgen's own client and servers in pods, one client Job per
// measurement, and their table against hostNetwork.
package paths

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"loadgen/meshes/k8s"
	"loadgen/results"
)

// `loadgen k8s paths` measures the paths k8s-netperf measures
// (cloud-bulldozer/k8s-netperf), with loadgen's own client and targets in
// pods: hostNetwork to hostNetwork (the baseline), pod to pod on one node,
// pod to a ClusterIP Service, pod to a NodePort, and pod to pod across
// nodes where two schedulable nodes exist. This file is the plan: which
// paths and tests, where each client and server runs, what it dials.

// The paths, in the order they run and print.
const (
	HostHost        = "host-host"            // hostNetwork client → hostNetwork server, the node's IP
	PodPodSameNode  = "pod-pod-same-node"    // pod → the server pod's IP, one node
	PodClusterIP    = "pod-clusterip"        // pod → a ClusterIP Service, its endpoint the server pod
	PodNodePort     = "pod-nodeport"         // pod → the server's node IP : nodePort
	HostHostOther   = "host-host-other-node" // hostNetwork client on another node → hostNetwork server
	PodPodOtherNode = "pod-pod-other-node"   // pod on another node → the server pod's IP
	// PodClusterIPOther is a pod on another node → the ClusterIP,
	// whose one endpoint is the server pod, on the servers' node.
	PodClusterIPOther = "pod-clusterip-other-node"
)

// The tests: netperf's TCP_STREAM, TCP_RR and TCP_CRR against `loadgen
// serve tcp`, and HTTP/1.1 against `loadgen serve httpbin`.
const (
	TestTCPStream = "tcp-stream"
	TestTCPRR     = "tcp-rr"
	TestTCPCRR    = "tcp-crr"
	TestHTTP      = "http"
	// UDP_STREAM and UDP_RR against `loadgen serve udp`: asked by name
	// only (--tests), as k8s-netperf's UDP profiles are.
	TestUDPStream = "udp-stream"
	TestUDPRR     = "udp-rr"
	// TestMTLS is HTTP/1.1 over mutual TLS, only when asked for
	// (Options.Tests): the servers require a client certificate, which
	// the clients present (a CA made for the run issues both).
	TestMTLS = "mtls"
)

// Defaults of `loadgen k8s paths`: k8s-netperf's 10 s per sample and 3
// samples, netperf's 1024-byte messages (-m, as the CNI study used).
const (
	DefaultNamespace = k8s.DefaultPathsNamespace
	DefaultDuration  = 10 * time.Second
	DefaultRepeats   = 3
	DefaultTolerance = 0.10
	MessageSize      = 1024
	// HTTPConnections is the HTTP test's closed loop: a few
	// connections on one thread.
	HTTPConnections = 4
	HTTPEndpoint    = "/bytes/1024"
)

// The hostNetwork server's ports: in the node's own network namespace,
// away from the ports a node's components and NodePorts take.
const (
	HostPortHTTP = 18080
	HostPortTCP  = 19000
	HostPortUDP  = 19002
	HostPortMTLS = 18443
)

// PortMTLS is the pod-network server's mutual TLS port (TestMTLS), and
// its Services'.
const PortMTLS = 8443

// Names of the objects a paths run creates (besides a Job per
// measurement).
const (
	ServerName     = "lgp-server"      // the pod-network server
	HostServerName = "lgp-host-server" // the hostNetwork server
	ClusterIPName  = "lgp-clusterip"
	NodePortName   = "lgp-nodeport"
	appName        = "loadgen-paths"
)

// NotMeasurableOneNode is what a cross-node row says on a cluster with
// one schedulable node.
const NotMeasurableOneNode = "not measurable here: one schedulable node"

// Options say what `loadgen k8s paths` measures and where.
type Options struct {
	Namespace string        // default DefaultNamespace; loadgen creates it
	RunID     string        // LabelRun on every object (default DefaultRunID)
	Image     string        // the loadgen image (default DefaultImage)
	Duration  time.Duration // each sample (default DefaultDuration)
	Repeats   int           // samples of each path × test (default DefaultRepeats)
	// Tolerance is how far below its hostNetwork row (a fraction: 0.10)
	// a judged pod path may fall before the run fails, as k8s-netperf's
	// --tcp-tolerance.
	Tolerance float64
	// Judge is which rows the tolerance judges: JudgeNetperf (the
	// default: k8s-netperf's rule) or JudgeAll (every pod row).
	Judge string
	// Paths and Tests, when set, are the only paths and tests measured
	// (by name; a pod path's hostNetwork row is measured with it, as its
	// baseline).
	Paths, Tests []string
	// StreamSize is TCP_STREAM's write size in bytes (0: MessageSize, as
	// k8s-netperf's); an iperf-style stream writes 128 KiB.
	StreamSize int
	// FlannelBackend, when set, is the Flannel backend every schedulable
	// node must run (its flannel.alpha.coreos.com/backend-type
	// annotation): a run on another refuses before it creates anything.
	FlannelBackend string
	// CNI names the cluster's datapath as the lab's modes do (macvlan,
	// vxlan, host-gw, ebpf …), recorded in the table for the studies,
	// which read a run's rows as that mode's; a cluster on Flannel is
	// named by its backend unless told.
	CNI string
	// Labels name every measurement's run (--label).
	Labels results.Labels
}

// withDefaults fills what was left empty and checks the rest.
func (o Options) withDefaults() (Options, error) {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.RunID == "" {
		o.RunID = k8s.DefaultRunID
	}
	if o.Image == "" {
		o.Image = k8s.DefaultImage
	}
	if o.Duration == 0 {
		o.Duration = DefaultDuration
	}
	if o.Repeats == 0 {
		o.Repeats = DefaultRepeats
	}
	if o.Judge == "" {
		o.Judge = JudgeNetperf
	}
	switch samples := CheckSamples(o.Duration, o.Repeats); {
	case o.Judge != JudgeNetperf && o.Judge != JudgeAll:
		return o, fmt.Errorf("judge %q: want %s (k8s-netperf's rule) or %s (every pod row)", o.Judge, JudgeNetperf, JudgeAll)
	case samples != nil:
		return o, samples
	case o.Tolerance < 0 || o.Tolerance >= 1:
		return o, fmt.Errorf("tolerance %g%%: want 0%% or more and below 100%%", 100*o.Tolerance)
	case len(o.RunID) > 40:
		return o, fmt.Errorf("run id %q: at most 40 characters (it names each measurement's Job)", o.RunID)
	}
	if o.StreamSize < 0 || o.StreamSize > 16<<20 {
		return o, fmt.Errorf("stream size %d: want 1 B to 16 MiB", o.StreamSize)
	}
	for _, name := range o.Paths {
		if !slices.Contains(PathNames, name) {
			return o, fmt.Errorf("path %q: want some of %v", name, PathNames)
		}
	}
	for _, name := range o.Tests {
		if !slices.ContainsFunc(Tests, func(t TestSpec) bool { return t.Name == name }) {
			return o, fmt.Errorf("test %q: want some of %s", name, testNames())
		}
	}
	return o, o.mesh().Validate()
}

// Which rows the tolerance judges (Options.Judge).
const (
	// JudgeNetperf is k8s-netperf's rule: its pass/fail covers TCP_STREAM
	// (its README's "Pass/Fail Context": Yes for TCP_STREAM, No for
	// TCP_RR and TCP_CRR), hostNetwork against the pod network across
	// nodes ("k8s-netperf must be able to run with hostNetwork and
	// podNetwork across nodes", docs/output-and-results.md): here the
	// tcp-stream row of pod-pod-other-node against host-host-other-node.
	JudgeNetperf = "netperf"
	// JudgeAll judges every pod row against its hostNetwork row.
	JudgeAll = "all"
)

// Judged tells whether the tolerance judges a path × test under the rule.
func Judged(judge string, path PathSpec, test string) bool {
	if path.Baseline == "" {
		return false // a hostNetwork row is the baseline
	}
	if judge == JudgeAll {
		return true
	}
	return test == TestTCPStream && path.Name == PodPodOtherNode
}

// PathNames are the paths, in the order they run and print.
var PathNames = []string{HostHost, PodPodSameNode, PodClusterIP, PodNodePort, HostHostOther, PodPodOtherNode, PodClusterIPOther}

// CheckSamples is the one rule of a paths run's samples: each measured
// 1s to 1h, 1 to 100 of each path × test. Options leave zero for the
// default; a command line that gives 0 is refused by this.
func CheckSamples(duration time.Duration, repeats int) error {
	switch {
	case duration < time.Second:
		return fmt.Errorf("duration %v: want 1s or more per sample", duration)
	case duration > time.Hour:
		return fmt.Errorf("duration %v: want at most 1h per sample", duration)
	case repeats < 1 || repeats > 100:
		return fmt.Errorf("repeats %d: want 1 to 100", repeats)
	}
	return nil
}

// Validate checks the options as a run would, before anything else.
func (o Options) Validate() error {
	_, err := o.withDefaults()
	return err
}

// mesh is the rendering options the shared renderers (labels, the client
// Job) take: no mesh.
func (o Options) mesh() k8s.Options {
	return k8s.Options{Namespace: o.Namespace, RunID: o.RunID, Image: o.Image, Mesh: k8s.MeshNone, Mode: k8s.ModeBoth,
		IngressNamespace: k8s.DefaultIngressNS}
}

// reach is what a path's client dials.
type reach int

const (
	reachHostIP    reach = iota // the hostNetwork server on its node's IP
	reachPodIP                  // the server pod's IP
	reachClusterIP              // the ClusterIP Service's address
	reachNodePort               // the server's node IP and the NodePort Service's port
)

// PathSpec is one path: where its client runs and what it dials.
type PathSpec struct {
	Name  string
	Title string // in k8s-netperf's words
	// Baseline is the hostNetwork row its figures are a ratio to; empty
	// for a hostNetwork row itself.
	Baseline    string
	HostNetwork bool   // the client runs in the node's network namespace
	ClientNode  string // the node the client runs on; empty when not measurable
	// NotMeasurable says why the path cannot run on this cluster.
	NotMeasurable string
	reach         reach
}

// Measurable tells whether the path runs on this cluster.
func (p PathSpec) Measurable() bool { return p.NotMeasurable == "" }

// TestSpec is one test: a `loadgen run` protocol and what its figure is.
type TestSpec struct {
	Name     string
	Title    string // netperf's name
	Protocol string // loadgen run -p
	Unit     string // of the figure: higher is better for every test
	// Connections and Threads are the closed loop's.
	Connections, Threads int
	// OptIn is set when the test runs only when asked by name
	// (Options.Tests).
	OptIn bool
}

// Runs tells whether the options run test t: every test not OptIn when
// none is named, else the named ones.
func (o Options) Runs(t TestSpec) bool {
	if len(o.Tests) == 0 {
		return !t.OptIn
	}
	return slices.Contains(o.Tests, t.Name)
}

// UDP tells a UDP test (its server is `loadgen serve udp`).
func (t TestSpec) UDP() bool { return t.Name == TestUDPStream || t.Name == TestUDPRR }

// Tests are the tests, in the order they run and print: one
// connection for STREAM, RR and CRR (k8s-netperf's default), a few for
// HTTP/1.1.
var Tests = []TestSpec{
	{Name: TestTCPStream, Title: "TCP_STREAM", Protocol: "tcp-stream", Unit: "Gbit/s", Connections: 1, Threads: 1},
	{Name: TestTCPRR, Title: "TCP_RR", Protocol: "tcp-rr", Unit: "trans/s", Connections: 1, Threads: 1},
	{Name: TestTCPCRR, Title: "TCP_CRR", Protocol: "tcp-crr", Unit: "conn/s", Connections: 1, Threads: 1},
	{Name: TestHTTP, Title: "HTTP/1.1", Protocol: "http1", Unit: "req/s", Connections: HTTPConnections, Threads: 1},
	{Name: TestUDPStream, Title: "UDP_STREAM", Protocol: "udp-stream", Unit: "Gbit/s", Connections: 1, Threads: 1, OptIn: true},
	{Name: TestUDPRR, Title: "UDP_RR", Protocol: "udp-rr", Unit: "trans/s", Connections: 1, Threads: 1, OptIn: true},
	{Name: TestMTLS, Title: "HTTP/1.1 mTLS", Protocol: "http1", Unit: "req/s", Connections: HTTPConnections, Threads: 1, OptIn: true},
}

// testSpec is the test named name.
func testSpec(name string) TestSpec {
	i := slices.IndexFunc(Tests, func(t TestSpec) bool { return t.Name == name })
	return Tests[i]
}

// testNames are every test's names, for a message.
func testNames() string {
	var names []string
	for _, t := range Tests {
		names = append(names, t.Name)
	}
	return strings.Join(names, ", ")
}

// Rung is the test's closed loop as sweeps name it: c1t1.
func (t TestSpec) Rung() string { return fmt.Sprintf("c%dt%d", t.Connections, t.Threads) }

// Plan is a paths run laid out on a cluster's nodes.
type Plan struct {
	Options Options
	// Nodes are the cluster's schedulable nodes, by name; the servers run
	// on the first (ServerNode), cross-node clients on the second
	// (OtherNode, empty with one).
	Nodes                 []string
	ServerNode, OtherNode string
	Paths                 []PathSpec
	Tests                 []TestSpec
	// mtls are the run's certificates when TestMTLS is planned.
	mtls *mtlsFiles
}

// SchedulableNodes are the nodes a pod can be placed on, by name: not
// cordoned, not tainted NoSchedule or NoExecute (a node that is not ready
// is tainted so), in name order.
func SchedulableNodes(nodes []corev1.Node) []string {
	var out []string
	for _, n := range nodes {
		if n.Spec.Unschedulable {
			continue
		}
		if slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool {
			return t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute
		}) {
			continue
		}
		out = append(out, n.Name)
	}
	slices.Sort(out)
	return out
}

// NewPlan lays the paths out on the cluster's nodes: servers and
// same-node clients on the first schedulable node, cross-node clients on
// the second; with one schedulable node the cross-node rows say they are
// not measurable here.
func NewPlan(o Options, nodes []corev1.Node) (*Plan, error) {
	names := SchedulableNodes(nodes)
	if len(names) == 0 {
		return nil, fmt.Errorf("no schedulable node among the cluster's %d: each is cordoned or tainted NoSchedule/NoExecute", len(nodes))
	}
	return planOn(o, names)
}

// planOn is the plan on named schedulable nodes.
func planOn(o Options, nodes []string) (*Plan, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	p := &Plan{Options: o, Nodes: nodes, ServerNode: nodes[0]}
	for _, t := range Tests {
		if o.Runs(t) {
			p.Tests = append(p.Tests, t)
		}
	}
	if p.HasMTLS() {
		if p.mtls, err = newMTLSFiles(); err != nil {
			return nil, err
		}
	}
	if len(nodes) > 1 {
		p.OtherNode = nodes[1]
	}
	a, b := p.ServerNode, p.OtherNode
	why := ""
	if b == "" {
		why = NotMeasurableOneNode
	}
	p.Paths = []PathSpec{
		{Name: HostHost, Title: "hostNetwork ↔ hostNetwork, one node (the node's IP)", HostNetwork: true, ClientNode: a, reach: reachHostIP},
		{Name: PodPodSameNode, Title: "pod ↔ pod, one node (pod IP)", Baseline: HostHost, ClientNode: a, reach: reachPodIP},
		{Name: PodClusterIP, Title: "pod → ClusterIP Service, one node", Baseline: HostHost, ClientNode: a, reach: reachClusterIP},
		{Name: PodNodePort, Title: "pod → NodePort (node IP : nodePort), one node", Baseline: HostHost, ClientNode: a, reach: reachNodePort},
		{Name: HostHostOther, Title: "hostNetwork ↔ hostNetwork, across nodes", HostNetwork: true, ClientNode: b, NotMeasurable: why, reach: reachHostIP},
		{Name: PodPodOtherNode, Title: "pod ↔ pod, across nodes (pod IP)", Baseline: HostHostOther, ClientNode: b, NotMeasurable: why, reach: reachPodIP},
		{Name: PodClusterIPOther, Title: "pod → ClusterIP Service, its endpoint on the other node", Baseline: HostHostOther, ClientNode: b, NotMeasurable: why, reach: reachClusterIP},
	}
	if len(o.Paths) > 0 {
		// The paths asked for, and the hostNetwork rows their ratios are to.
		keep := slices.Clone(o.Paths)
		for _, path := range p.Paths {
			if slices.Contains(o.Paths, path.Name) && path.Baseline != "" {
				keep = append(keep, path.Baseline)
			}
		}
		p.Paths = slices.DeleteFunc(p.Paths, func(s PathSpec) bool { return !slices.Contains(keep, s.Name) })
	}
	return p, nil
}

// BaselinePath is the path the results directories name their baseline
// (loadgen report's): host-host, or host-host-other-node for a plan of
// cross-node paths only.
func (p *Plan) BaselinePath() string {
	for _, name := range []string{HostHost, HostHostOther} {
		if s, ok := p.Path(name); ok && s.Measurable() {
			return name
		}
	}
	return ""
}

// Path finds a path of the plan by name.
func (p *Plan) Path(name string) (PathSpec, bool) {
	i := slices.IndexFunc(p.Paths, func(s PathSpec) bool { return s.Name == name })
	if i < 0 {
		return PathSpec{}, false
	}
	return p.Paths[i], true
}

// Measurement is one sample: a path × test in one repeat, one client Job.
type Measurement struct {
	Index  int // in run order, from 0: names its Job
	Repeat int // from 1
	Path   PathSpec
	Test   TestSpec
	// Size is the messages' (TCP_STREAM's writes'); 0 is MessageSize.
	Size int
}

func (m Measurement) size() int {
	if m.Size > 0 {
		return m.Size
	}
	return MessageSize
}

// Size is a test's message size in the plan: TCP_STREAM's writes are
// StreamSize when set.
func (p *Plan) Size(t TestSpec) int {
	if t.Name == TestTCPStream && p.Options.StreamSize > 0 {
		return p.Options.StreamSize
	}
	return MessageSize
}

// ID is the measurement's step in its test's results directory, as
// loadgen sweep names steps: PATH_RUNG_PAYLOAD_closed_rREPEAT.
func (m Measurement) ID() string {
	return fmt.Sprintf("%s_%s_%dKiB_closed_r%d", m.Path.Name, m.Test.Rung(), max(m.size()/1024, 1), m.Repeat)
}

// Measurements are the plan's samples in run order: each repeat a full
// pass over tests and paths, so that a cluster drifting during the run
// drifts for every path alike.
func (p *Plan) Measurements() []Measurement {
	var out []Measurement
	for r := 1; r <= p.Options.Repeats; r++ {
		for _, t := range p.Tests {
			for _, path := range p.Paths {
				if path.Measurable() {
					out = append(out, Measurement{Index: len(out), Repeat: r, Path: path, Test: t, Size: p.Size(t)})
				}
			}
		}
	}
	return out
}

// Endpoints are the servers' addresses as the cluster reports them.
type Endpoints struct {
	NodeIP    string // the servers' node (the hostNetwork server's status.hostIP)
	PodIP     string // the pod-network server's status.podIP
	ClusterIP string // the ClusterIP Service's spec.clusterIP
	// NodePortTCP, NodePortHTTP and NodePortUDP are the NodePort
	// Service's allocated ports; NodePortMTLS its mutual TLS port's
	// (TestMTLS).
	NodePortTCP, NodePortHTTP, NodePortUDP, NodePortMTLS int32
}

// Target is what the measurement's client dials: host:port for TCP, a
// URL for HTTP.
func (p *Plan) Target(m Measurement, ep Endpoints) string {
	n := func(port int32) string { return strconv.Itoa(int(port)) }
	tcpPort, udpPort, nodePort, hostPort := k8s.PortTCP, k8s.PortUDP, ep.NodePortTCP, HostPortTCP
	if m.Test.UDP() {
		tcpPort, nodePort, hostPort = udpPort, ep.NodePortUDP, HostPortUDP
	}
	switch m.Path.reach {
	case reachPodIP:
		return target(m.Test, ep.PodIP, ports{strconv.Itoa(tcpPort), strconv.Itoa(k8s.PortHTTP), strconv.Itoa(PortMTLS)})
	case reachClusterIP:
		return target(m.Test, ep.ClusterIP, ports{strconv.Itoa(tcpPort), strconv.Itoa(k8s.PortHTTP), strconv.Itoa(PortMTLS)})
	case reachNodePort:
		return target(m.Test, ep.NodeIP, ports{n(nodePort), n(ep.NodePortHTTP), n(ep.NodePortMTLS)})
	}
	return target(m.Test, ep.NodeIP, ports{strconv.Itoa(hostPort), strconv.Itoa(HostPortHTTP), strconv.Itoa(HostPortMTLS)})
}

// ports are a server's TCP, HTTP and mutual TLS ports.
type ports struct{ tcp, http, mtls string }

// podPorts are the pod-network server's, and its Services'.
var podPorts = ports{strconv.Itoa(k8s.PortTCP), strconv.Itoa(k8s.PortHTTP), strconv.Itoa(PortMTLS)}

func target(t TestSpec, host string, p ports) string {
	switch t.Name {
	case TestHTTP:
		return "http://" + net.JoinHostPort(host, p.http) + HTTPEndpoint
	case TestMTLS:
		return "https://" + net.JoinHostPort(host, p.mtls) + HTTPEndpoint
	}
	return net.JoinHostPort(host, p.tcp)
}

// RunArgs are `loadgen run`'s flags for a measurement, less the -c and
// -t the worker adds, with the target last.
func (p *Plan) RunArgs(m Measurement, ep Endpoints) []string {
	a := []string{"-q", "-d", p.Options.Duration.String()}
	switch m.Test.Name {
	case TestHTTP:
	case TestMTLS:
		// The server's certificate names no address the client dials (a
		// pod IP, a ClusterIP, a node's): what is checked is the client's.
		a = append(a, "--insecure")
		a = append(a, k8s.ClientCertArgs(mtlsClient)...)
	default:
		a = append(a, "-p", m.Test.Protocol, "--size", strconv.Itoa(m.size()))
	}
	a = append(a, p.Options.Labels.Flags()...)
	return append(a, p.Target(m, ep))
}
