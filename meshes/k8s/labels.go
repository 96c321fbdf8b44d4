package k8s

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Every object loadgen creates carries these labels: cleanup finds its
// objects by them and touches nothing else.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "loadgen"
	LabelRun       = "loadgen.dev/run"
	LabelName      = "app.kubernetes.io/name"
	LabelComponent = "app.kubernetes.io/component"
	// LabelCreated marks a namespace loadgen created itself: the only kind
	// of namespace cleanup deletes.
	LabelCreated = "loadgen.dev/created-namespace"
	// LabelNamespace ties a cluster-scoped object to the run's namespace.
	LabelNamespace = "loadgen.dev/namespace"
	// LabelStep is the sweep step a worker pod runs.
	LabelStep = "loadgen.dev/step"
)

// Names of the objects every rendering holds.
const (
	TargetName = "loadgen-target"
	ClientName = "loadgen-client"
)

// The target's ports. The direct ports, one per protocol as istio/tools'
// benchmark has them (8076–8078), are left out of every proxy's capture,
// inbound and outbound (sidecar.go), so the baseline crosses no proxy; in
// an ambient mesh they are served by a target out of the mesh.
// PortHTTPSDirect is httpbin with TLS, as `loadgen serve httpbin --tls`
// serves it: HTTP/2 and HTTP/1.1 on TCP, HTTP/3 on UDP of the same
// number (the direct path of -p h3).
const (
	PortHTTP        = 8080
	PortHTTPDirect  = 8081
	PortHTTPSDirect = 8443
	PortGRPC        = 9090
	PortGRPCDirect  = 9091
	PortTCP         = 9000
	PortTCPDirect   = 9001
	PortUDP         = 9002 // loadgen serve udp: echo and counting sink
)

// DirectPorts are the target's ports that no proxy captures.
var DirectPorts = []int{PortHTTPDirect, PortGRPCDirect, PortTCPDirect, PortHTTPSDirect}

// DirectPort tells whether a target port is one of DirectPorts.
func DirectPort(port int) bool { return slices.Contains(DirectPorts, port) }

// NewRunID is a new random run id (LabelRun's value, Options.RunID): "r"
// and eight hex digits, a DNS label whatever the digits.
func NewRunID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "r" + hex.EncodeToString(b)
}

// OrNewRunID is a run's id on a cluster (k8s run, k8s paths): id as
// given, or a new one (NewRunID) when empty, so that its objects never
// carry DefaultRunID, which is rendering's.
func OrNewRunID(id string) string {
	if id == "" {
		return NewRunID()
	}
	return id
}

// Selector is the label selector of everything a run created, or, with an
// empty id, of everything loadgen created.
func Selector(runID string) string {
	s := LabelManagedBy + "=" + ManagedBy
	if runID != "" {
		s += "," + LabelRun + "=" + runID
	}
	return s
}

// StepSelector is the label selector of the worker pods of a run's step.
func StepSelector(runID string, step int) string {
	return Selector(runID) + "," + LabelName + "=" + ClientName + "," + LabelStep + "=" + strconv.Itoa(step)
}

// Meta returns object metadata with the run's labels and extra ones.
func (o Options) Meta(name, namespace string, extra map[string]string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: o.labels(extra)}
}

func (o Options) labels(extra map[string]string) map[string]string {
	l := map[string]string{LabelManagedBy: ManagedBy, LabelRun: o.RunID}
	for k, v := range extra {
		l[k] = v
	}
	return l
}
