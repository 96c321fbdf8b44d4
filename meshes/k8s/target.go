package k8s

import (
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// namespace is the run's namespace, created by loadgen (LabelCreated) with
// the mesh's labels and annotations added by the mesh renderers.
func (o Options) namespace() *corev1.Namespace {
	ns := &corev1.Namespace{ObjectMeta: o.Meta(o.Namespace, "", map[string]string{LabelCreated: "true"})}
	return ns
}

// targetPort is one server of the target pod: a container of its own, so
// that each port is one `loadgen serve` process.
type targetPort struct {
	name string // the Service port's name: its prefix tells meshes the protocol
	port int32
	args []string
	// udp names the UDP port of the same number the server serves too
	// (HTTP/3 beside HTTPS); empty: none.
	udp string
}

// targetPorts are a target's servers; next, when set, is the Service
// its httpbin servers call (--hops): the mesh port the next's mesh port,
// the direct port the next's direct port.
func targetPorts(next string) []targetPort {
	addr := func(p int) string { return "0.0.0.0:" + strconv.Itoa(p) }
	call := func(p int) []string {
		if next == "" {
			return nil
		}
		return []string{"--call", "http://" + next + ":" + strconv.Itoa(p)}
	}
	return []targetPort{
		{"http-httpbin", PortHTTP, append([]string{"serve", "httpbin", "--addr", addr(PortHTTP)}, call(PortHTTP)...), ""},
		{"http-direct", PortHTTPDirect, append([]string{"serve", "httpbin", "--addr", addr(PortHTTPDirect)}, call(PortHTTPDirect)...), ""},
		{"grpc-echo", PortGRPC, []string{"serve", "grpc", "--addr", addr(PortGRPC)}, ""},
		{"grpc-direct", PortGRPCDirect, []string{"serve", "grpc", "--addr", addr(PortGRPCDirect)}, ""},
		{"tcp-echo", PortTCP, []string{"serve", "tcp", "--addr", addr(PortTCP)}, ""},
		{"tcp-direct", PortTCPDirect, []string{"serve", "tcp", "--addr", addr(PortTCPDirect)}, ""},
		// HTTPS on TCP and HTTP/3 on UDP 8443, a self-signed certificate:
		// the direct path of -p h3 (directFor). Its calls (--hops) go to
		// the next hop's plain direct port.
		{"https-direct", PortHTTPSDirect, append([]string{"serve", "httpbin", "--addr", addr(PortHTTPSDirect), "--tls"}, call(PortHTTPDirect)...), H3PortName},
	}
}

// TargetContainers are the target pod's own containers, its servers: what
// its cost counts, and not the containers a mesh injects beside them.
func TargetContainers() []string {
	var out []string
	for _, p := range targetPorts("") {
		out = append(out, p.name)
	}
	return out
}

// targetLabels select the target's pods.
func targetLabels() map[string]string { return map[string]string{LabelName: TargetName} }

// TargetDirectName is, in an ambient mesh, the second target the direct
// path loads: the same servers in a pod out of the mesh
// (istio.io/dataplane-mode=none), since ztunnel captures every port of an
// enrolled pod and no port can be left out.
const TargetDirectName = "loadgen-target-direct"

// DirectTarget tells whether the rendering has a target of its own for
// the direct path.
func (o Options) DirectTarget() bool {
	return o.Mesh == MeshIstioAmbient || o.Mesh == MeshIstioWaypoint
}

// TargetNames are the target Deployments (and Services) of the rendering:
// the first, the next hops' (--hops), the direct path's.
func (o Options) TargetNames() []string {
	out := []string{TargetName}
	for i := 2; i <= o.Hops; i++ {
		out = append(out, HopName(i))
	}
	if o.DirectTarget() {
		out = append(out, TargetDirectName)
	}
	return out
}

// TargetSelector selects every target pod of the rendering.
func (o Options) TargetSelector() string {
	names := o.TargetNames()
	if len(names) == 1 {
		return LabelName + "=" + TargetName
	}
	return LabelName + " in (" + strings.Join(names, ",") + ")"
}

// HopName is the target of hop i of a chain (--hops): loadgen-target for
// the first, which the paths load, then loadgen-target-2, -3, ….
func HopName(i int) string {
	if i <= 1 {
		return TargetName
	}
	return TargetName + "-" + strconv.Itoa(i)
}

// next is the Service hop i calls, "" for the last.
func (o Options) next(i int) string {
	if i >= o.Hops {
		return ""
	}
	return HopName(i+1) + "." + o.Namespace + ".svc.cluster.local"
}

// target is the httpbin + gRPC + TCP target: one Deployment of one pod.
func (o Options) target() *appsv1.Deployment { return o.hopTarget(1) }

// hopTarget is hop i's target: the first one's, or the one of a
// further hop of a chain, the same servers calling the next hop's.
func (o Options) hopTarget(i int) *appsv1.Deployment {
	l, a := o.serverPod()
	return o.targetDeployment(HopName(i), o.next(i), i, l, a)
}

// targetDirect is the direct path's target of an ambient mesh, on the
// mesh target's node (a required pod affinity): the baseline then
// measures the same server node, and the workers, kept off both targets'
// node, are kept off one node only.
func (o Options) targetDirect() *appsv1.Deployment {
	l, a := o.podMeta(podSide{server: true, direct: true})
	d := o.targetDeployment(TargetDirectName, "", 0, l, a)
	if d.Spec.Template.Spec.Affinity == nil {
		d.Spec.Template.Spec.Affinity = &corev1.Affinity{}
	}
	d.Spec.Template.Spec.Affinity.PodAffinity = &corev1.PodAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: targetLabels()},
			TopologyKey:   corev1.LabelHostname,
		}},
	}
	return d
}

// targetDeployment is a target named name whose httpbin servers call
// next (none: ""); hop is its place in a chain (0: the direct target).
func (o Options) targetDeployment(name, next string, hop int, meshLabels, annotations map[string]string) *appsv1.Deployment {
	sel := map[string]string{LabelName: name}
	podLabels := o.labels(sel)
	for k, v := range meshLabels {
		podLabels[k] = v
	}
	var containers []corev1.Container
	for _, p := range targetPorts(next) {
		c := corev1.Container{
			Name:            p.name,
			Image:           o.Image,
			ImagePullPolicy: corev1.PullIfNotPresent,
			Args:            p.args,
			Ports:           []corev1.ContainerPort{{Name: shortPortName(p.name), ContainerPort: p.port, Protocol: corev1.ProtocolTCP}},
			SecurityContext: Restricted(),
		}
		if p.udp != "" {
			c.Ports = append(c.Ports, corev1.ContainerPort{Name: shortPortName(p.udp), ContainerPort: p.port, Protocol: corev1.ProtocolUDP})
		}
		switch p.port {
		case PortHTTP, PortHTTPDirect:
			c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: "/healthz", Port: intstr.FromInt32(p.port)}}}
		case PortHTTPSDirect:
			// The kubelet does not verify an HTTPS probe's certificate.
			c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{
				Path: "/healthz", Port: intstr.FromInt32(p.port), Scheme: corev1.URISchemeHTTPS}}}
		default:
			c.ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{
				Port: intstr.FromInt32(p.port)}}}
		}
		containers = append(containers, c)
	}
	pod := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: annotations},
		Spec:       corev1.PodSpec{Containers: containers},
	}
	o.addSidecar(&pod.Spec, true, o.hopSidecarConfig(hop))
	o.onTargetNode(&pod.Spec)
	return &appsv1.Deployment{
		ObjectMeta: o.Meta(name, o.Namespace, sel),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: pod,
		},
	}
}

// shortPortName fits a container port name in its 15 characters.
func shortPortName(s string) string {
	if len(s) > 15 {
		return s[:15]
	}
	return s
}

// service exposes the target's ports, named http-*, grpc-* and tcp-* so
// that Istio and Linkerd pick the protocol without guessing.
func (o Options) service() *corev1.Service { return o.targetService(TargetName) }

// H3PortName is the target Service's UDP port of HTTP/3, 8443 beside
// HTTPS's TCP 8443. A Service may hold one number twice if the protocols
// differ: the API server refuses a duplicate (protocol, port) pair, not
// a duplicate port, and with more than one port each must have a name
// of its own; server-side apply keys the list by port and protocol too.
const H3PortName = "h3-direct"

func (o Options) targetService(name string) *corev1.Service {
	sel := map[string]string{LabelName: name}
	var ports []corev1.ServicePort
	for _, p := range targetPorts("") {
		ports = append(ports, corev1.ServicePort{Name: p.name, Port: p.port, TargetPort: intstr.FromInt32(p.port),
			Protocol: corev1.ProtocolTCP, AppProtocol: appProtocol(p.name)})
		if p.udp != "" {
			ports = append(ports, corev1.ServicePort{Name: p.udp, Port: p.port, TargetPort: intstr.FromInt32(p.port), Protocol: corev1.ProtocolUDP})
		}
	}
	meta := o.Meta(name, o.Namespace, sel)
	meta.Annotations = o.ServiceAnnotations()
	return &corev1.Service{
		ObjectMeta: meta,
		Spec:       corev1.ServiceSpec{Selector: sel, Ports: ports},
	}
}

// appProtocol is the Service port's appProtocol for gRPC (h2c), which
// gateways and meshes read before the name.
func appProtocol(name string) *string {
	if strings.HasPrefix(name, "grpc-") {
		return ptr.To("kubernetes.io/h2c")
	}
	return nil
}

// NonRootUser is the user loadgen's containers run as.
const NonRootUser = 65532

// Restricted is a container security context that the "restricted" Pod
// Security Standard accepts. The user is loadgen's containers', never
// the pod's: a mesh's injected init container that sets none (App Mesh's
// proxyinit) would inherit it, and its iptables needs root.
func Restricted() *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot:             ptr.To(true),
		RunAsUser:                ptr.To[int64](NonRootUser),
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
}
