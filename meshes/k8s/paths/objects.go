package paths

import (
	"strconv"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"loadgen/meshes/k8s"
)

// The objects of a paths run, typed: the namespace, the two servers (one
// in the pod network, one in the node's), a ClusterIP and a NodePort
// Service in front of the pod server, and one client Job per
// measurement.

// Labels a paths run adds: which server a pod is, and which path and test
// a client Job measures.
const (
	LabelPath = "loadgen.dev/path"
	LabelTest = "loadgen.dev/test"
)

// Components of a paths run's servers (LabelComponent).
const (
	componentServer     = "server"
	componentHostServer = "host-server"
)

// jobGrace is the time a client Job has beyond its sample: to be
// scheduled, start, connect and print.
const jobGrace = 60 * time.Second

// Objects are what a paths run applies, in order: the namespace, the
// servers and the Services.
func (p *Plan) Objects() []runtime.Object {
	o := p.Options.mesh()
	ns := &corev1.Namespace{ObjectMeta: o.Meta(o.Namespace, "", map[string]string{k8s.LabelCreated: "true"})}
	objs := []runtime.Object{ns}
	if p.mtls != nil {
		objs = append(objs, p.mtlsSecret())
	}
	return append(objs, p.serverPod(true), p.serverPod(false),
		p.service(ClusterIPName, corev1.ServiceTypeClusterIP), p.service(NodePortName, corev1.ServiceTypeNodePort))
}

// serverLabels select a server's pod.
func serverLabels(component string) map[string]string {
	return map[string]string{k8s.LabelName: appName, k8s.LabelComponent: component}
}

// ServerLifetime bounds the servers (activeDeadlineSeconds): every
// measurement at its longest, and the wait for them to start. A run
// killed before its cleanup leaves servers that stop by themselves, and
// free the node's ports.
func (p *Plan) ServerLifetime() time.Duration {
	n := time.Duration(len(p.Measurements()))
	return 10*time.Minute + n*(p.Options.Duration+jobGrace)
}

// serverPod is `loadgen serve httpbin`, `serve tcp` and `serve udp` in one pod
// on the server node: in the pod network, or (host) in the node's, bound
// to the node's IP (status.hostIP) on ports of their own.
func (p *Plan) serverPod(host bool) *corev1.Pod {
	o := p.Options.mesh()
	name, component, addr, httpPort, tcpPort, udpPort, mtlsPort := ServerName, componentServer, "0.0.0.0", k8s.PortHTTP, k8s.PortTCP, k8s.PortUDP, PortMTLS
	var env []corev1.EnvVar
	if host {
		name, component, addr, httpPort, tcpPort, udpPort, mtlsPort = HostServerName, componentHostServer, "$(HOST_IP)", HostPortHTTP, HostPortTCP, HostPortUDP, HostPortMTLS
		env = []corev1.EnvVar{{Name: "HOST_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.hostIP"}}}}
	}
	container := func(cname, kind string, port int, probe corev1.ProbeHandler) corev1.Container {
		proto, rp := corev1.ProtocolTCP, &corev1.Probe{ProbeHandler: probe, PeriodSeconds: 2}
		if kind == "udp" {
			// No probe reaches a UDP port; the client's first datagram
			// (its probe, a sink's opening) is retried until it answers.
			proto, rp = corev1.ProtocolUDP, nil
		}
		return corev1.Container{
			Name:            cname,
			Image:           o.Image,
			ImagePullPolicy: corev1.PullIfNotPresent,
			Args:            []string{"serve", kind, "--addr", addr + ":" + strconv.Itoa(port)},
			Env:             env,
			Ports:           []corev1.ContainerPort{{Name: cname, ContainerPort: int32(port), Protocol: proto}},
			ReadinessProbe:  rp,
			SecurityContext: k8s.Restricted(),
		}
	}
	spec := corev1.PodSpec{
		Containers: []corev1.Container{
			container("http", "httpbin", httpPort, corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz", Port: intstr.FromInt(httpPort)}}),
			container("tcp", "tcp", tcpPort, corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt(tcpPort)}}),
			container("udp", "udp", udpPort, corev1.ProbeHandler{}),
		},
		RestartPolicy:         corev1.RestartPolicyNever,
		ActiveDeadlineSeconds: ptr.To(int64(p.ServerLifetime() / time.Second)),
		Affinity:              onNode(p.ServerNode),
		HostNetwork:           host,
		SecurityContext:       &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](65532)},
	}
	if p.mtls != nil {
		p.addMTLSServer(&spec, o.Image, addr, mtlsPort, env)
	}
	return &corev1.Pod{ObjectMeta: o.Meta(name, o.Namespace, serverLabels(component)), Spec: spec}
}

// service fronts the pod-network server: a ClusterIP or a NodePort
// Service (its nodePorts allocated by the API server, read back after).
func (p *Plan) service(name string, typ corev1.ServiceType) *corev1.Service {
	o := p.Options.mesh()
	svc := &corev1.Service{
		ObjectMeta: o.Meta(name, o.Namespace, map[string]string{k8s.LabelName: appName}),
		Spec: corev1.ServiceSpec{
			Type:     typ,
			Selector: serverLabels(componentServer),
			Ports: []corev1.ServicePort{
				{Name: "http", Port: k8s.PortHTTP, TargetPort: intstr.FromInt32(k8s.PortHTTP), Protocol: corev1.ProtocolTCP},
				{Name: "tcp", Port: k8s.PortTCP, TargetPort: intstr.FromInt32(k8s.PortTCP), Protocol: corev1.ProtocolTCP},
				{Name: "udp", Port: k8s.PortUDP, TargetPort: intstr.FromInt32(k8s.PortUDP), Protocol: corev1.ProtocolUDP},
			},
		},
	}
	if p.mtls != nil {
		svc.Spec.Ports = append(svc.Spec.Ports, corev1.ServicePort{Name: "mtls", Port: PortMTLS, TargetPort: intstr.FromInt32(PortMTLS), Protocol: corev1.ProtocolTCP})
	}
	return svc
}

// onNode places a pod on one node by name (the node's metadata.name, as
// the DaemonSet controller does: a hostname label may differ).
func onNode(node string) *corev1.Affinity {
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
		}}},
	}}
}

// JobName is a measurement's client Job.
func (p *Plan) JobName(m Measurement) string {
	return "lgp-" + p.Options.RunID + "-" + strconv.Itoa(m.Index)
}

// ClientJob is a measurement's client: the Job `k8s run` uses, of one
// `loadgen k8s worker -- run …`, on the path's client node, in the node's
// network namespace for a hostNetwork path. Samples run one at a time and
// at once, so the worker measures no clock (--clock=).
func (p *Plan) ClientJob(m Measurement, ep Endpoints) *batchv1.Job {
	o := p.Options.mesh()
	job := o.Job(k8s.JobSpec{Name: p.JobName(m), Workers: 1, Connections: m.Test.Connections, Threads: m.Test.Threads,
		RunArgs: p.RunArgs(m, ep), Deadline: p.Options.Duration + jobGrace, Index: m.Index, ClientCert: m.Test.Name == TestMTLS})
	for _, l := range []map[string]string{job.Labels, job.Spec.Template.Labels} {
		l[LabelPath], l[LabelTest] = m.Path.Name, m.Test.Name
	}
	spec := &job.Spec.Template.Spec
	spec.Affinity = onNode(m.Path.ClientNode)
	spec.HostNetwork = m.Path.HostNetwork
	if m.Path.HostNetwork {
		spec.DNSPolicy = corev1.DNSClusterFirstWithHostNet
	}
	c := &spec.Containers[0]
	args := make([]string, 0, len(c.Args)+1)
	for i, a := range c.Args {
		if a == "--" {
			args = append(append(args, "--clock="), c.Args[i:]...)
			break
		}
		args = append(args, a)
	}
	c.Args = args
	return job
}
