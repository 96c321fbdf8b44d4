package k8s

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"loadgen/internal/sidecarnames"
	"loadgen/meshes/caddy"
	"loadgen/meshes/haproxy"
	"loadgen/meshes/layout"
	"loadgen/meshes/leftover"
	"loadgen/meshes/mtls"
	"loadgen/meshes/nginxingress"
)

// MeshSidecar is loadgen's own sidecars: Istio's capture, installed by
// `loadgen mesh capture` in an init container, and a real nginx, HAProxy
// or Caddy beside the app as UID 1337, configured by loadgen as the local
// sidecars are (meshes/sidecar): one L7 proxy hop per side and nothing
// else of a mesh.
const MeshSidecar = "sidecar"

// ModeNone renders --mesh sidecar's pods without a proxy: a baseline run
// of the same objects.
const ModeNone = "none"

// The proxies --mesh sidecar runs.
const (
	ProxyNginx   = sidecarnames.Nginx
	ProxyHAProxy = sidecarnames.HAProxy
	ProxyCaddy   = sidecarnames.Caddy
)

// SidecarProxies lists them: internal/sidecarnames' ClusterProxies.
var SidecarProxies = sidecarnames.ClusterProxies()

// DefaultProxyImages are the proxies' official images.
var DefaultProxyImages = map[string]string{
	ProxyNginx:   "nginx:1.27",
	ProxyHAProxy: "haproxy:3.0",
	ProxyCaddy:   "caddy:2.8",
}

// DefaultSidecarProxy is --mesh sidecar's proxy when none is given.
const DefaultSidecarProxy = ProxyHAProxy

// DefaultProxyImageList names each proxy's default image, in
// SidecarProxies' order: "nginx:1.27, haproxy:3.0, caddy:2.8".
func DefaultProxyImageList() string {
	images := make([]string, len(SidecarProxies))
	for i, p := range SidecarProxies {
		images[i] = DefaultProxyImages[p]
	}
	return strings.Join(images, ", ")
}

// The containers --mesh sidecar adds to a pod.
const (
	// ContainerSidecar runs the proxy: the container the cost watches and
	// the presence checks look for.
	ContainerSidecar = "loadgen-sidecar"
	// ContainerCapture is the init container that installs the capture.
	ContainerCapture = "loadgen-capture"
)

// SidecarOptions are --mesh sidecar's.
type SidecarOptions struct {
	// Proxy is one of SidecarProxies (default DefaultSidecarProxy).
	Proxy string
	// Image is the proxy's image (default its official one,
	// DefaultProxyImages); its binary is found on PATH.
	Image string
	// NoNative is set when the cluster has no native sidecars (Kubernetes
	// before 1.29): the proxy is an ordinary container, which only the target
	// can have (a Job's pod would never complete).
	NoNative bool
}

// Where a sidecar's files are in its container.
const (
	sidecarConfDir = "/etc/loadgen-sidecar"      // the ConfigMap
	sidecarMTLSDir = "/etc/loadgen-sidecar/mtls" // the workload's identity
	sidecarRunDir  = "/run/loadgen-sidecar"      // the proxy's own files (an emptyDir)
)

// sidecarObject names the run's ConfigMap and Secret.
const sidecarObject = "loadgen-sidecar"

// The Secret's keys: the CA, and each side's certificate, key and both
// in one PEM (HAProxy's crt).
const (
	keyCA = "ca.crt"
)

// SidecarConfigFile is the proxy's config file name, its ConfigMap key.
func SidecarConfigFile(proxy string) string {
	switch proxy {
	case ProxyNginx:
		return "nginx.conf"
	case ProxyCaddy:
		return "caddy.json"
	}
	return "haproxy.cfg"
}

// sidecarMeshDefaults fills and checks --mesh sidecar's options; other
// meshes must leave them empty.
func (o *Options) sidecarMeshDefaults() error {
	if o.Mesh != MeshSidecar {
		if o.Sidecar != (SidecarOptions{}) {
			return fmt.Errorf("--proxy and --proxy-image apply to --mesh sidecar, not %s", o.Mesh)
		}
		if o.Mode == ModeNone {
			return fmt.Errorf("mode none applies to --mesh sidecar (its pods without a proxy), not %s", o.Mesh)
		}
		return nil
	}
	if o.Sidecar.Proxy == "" {
		o.Sidecar.Proxy = DefaultSidecarProxy
	}
	if !slices.Contains(SidecarProxies, o.Sidecar.Proxy) {
		return fmt.Errorf("unknown proxy %q: want one of %s", o.Sidecar.Proxy, strings.Join(SidecarProxies, ", "))
	}
	if o.Sidecar.Image == "" {
		o.Sidecar.Image = DefaultProxyImages[o.Sidecar.Proxy]
	}
	switch {
	case o.MTLS && o.Mode != ModeBoth:
		return fmt.Errorf("--mtls is between two sidecars: --mode both, not %s (the side without a proxy speaks plaintext)", o.Mode)
	case o.Sidecar.NoNative && o.InjectClient():
		return fmt.Errorf("--mode %s puts a sidecar in the workers' pods, which needs native sidecars (Kubernetes 1.29 or later): "+
			"without them a Job's pod never completes; use --mode serveronly", o.Mode)
	}
	return nil
}

// sidecarMeshObjects are --mesh sidecar's own objects: the proxy's
// config (one for both sides: the server's proxy uses its inbound side,
// the workers' their outbound one) and, with MTLS, the run's CA and the
// two workloads' identities, made fresh.
func (o Options) sidecarMeshObjects() ([]runtime.Object, error) {
	if o.Mode == ModeNone {
		return nil, nil
	}
	conf, err := o.sidecarConfig()
	if err != nil {
		return nil, err
	}
	cm := &corev1.ConfigMap{ObjectMeta: o.Meta(sidecarObject, o.Namespace, nil),
		Data: map[string]string{SidecarConfigFile(o.Sidecar.Proxy): string(conf)}}
	out := []runtime.Object{cm}
	// A chain's hops (--hops) send their calls to the next hop: each but
	// the last has a sidecar whose outbound side goes there.
	for i := 1; i < o.Hops; i++ {
		l := SidecarLayout(o.Sidecar.Proxy, fmt.Sprintf("%s:%d", o.next(i), PortHTTP), PortHTTP, o.Concurrency)
		conf, err := SidecarConfig(o.Sidecar.Proxy, l, false)
		if err != nil {
			return nil, err
		}
		out = append(out, &corev1.ConfigMap{ObjectMeta: o.Meta(o.hopSidecarConfig(i), o.Namespace, nil),
			Data: map[string]string{SidecarConfigFile(o.Sidecar.Proxy): string(conf)}})
	}
	if o.MTLS {
		s, err := o.sidecarIdentities()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// The workloads of the run's certificates: the target's name is its
// Service's, which the client's proxy verifies.
func (o Options) serverWorkload() mtls.Workload {
	return mtls.Workload{Namespace: o.Namespace, ServiceAccount: TargetName}
}

func (o Options) clientWorkload() mtls.Workload {
	return mtls.Workload{Namespace: o.Namespace, ServiceAccount: ClientName}
}

// sidecarLayout is the sidecar of every pod of --mesh sidecar, with the
// run's identities under --mtls.
func (o Options) sidecarLayout() layout.Sidecar {
	s := SidecarLayout(o.Sidecar.Proxy, fmt.Sprintf("%s.%s.svc.cluster.local:%d", TargetName, o.Namespace, PortHTTP), PortHTTP, o.Concurrency)
	if o.MTLS {
		server := o.serverWorkload()
		s.MTLS = &layout.MTLS{CA: sidecarMTLSDir + "/" + keyCA, Cert: sidecarMTLSDir + "/workload.crt", Key: sidecarMTLSDir + "/workload.key",
			PeerID: server.ID().String(), PeerName: server.DNSName()}
	}
	return s
}

// SidecarLayout is a pod's sidecar as loadgen runs it in a cluster:
// Istio's ports, the inbound side to the app on loopback (appPort), the
// outbound side to upstream (HOST:PORT, a Service's name: its ClusterIP
// exists only once applied), workers threads (0: Istio's 2).
func SidecarLayout(proxy, upstream string, appPort uint16, workers int) layout.Sidecar {
	any4, lo := netip.IPv4Unspecified(), netip.AddrFrom4([4]byte{127, 0, 0, 1})
	s := layout.Sidecar{
		Inbound:      netip.AddrPortFrom(any4, layout.InboundPort),
		App:          netip.AddrPortFrom(lo, appPort),
		Outbound:     netip.AddrPortFrom(any4, layout.OutboundPort),
		UpstreamName: upstream,
		Admin:        netip.AddrPortFrom(lo, layout.AdminPort),
		Workers:      workers,
	}
	if proxy != ProxyCaddy { // Caddy cannot bind the source address
		s.InboundSource = netip.MustParseAddr(layout.InboundSource)
	}
	return s
}

// sidecarConfig is the proxy's config, rendered by its profile.
func (o Options) sidecarConfig() ([]byte, error) {
	return SidecarConfig(o.Sidecar.Proxy, o.sidecarLayout(), false)
}

// SidecarConfig renders proxy's config for a pod's sidecar in layout s,
// its files under the container's run directory. Each proxy counts its
// requests on the admin listener (s.Admin), as a mesh's proxy keeps its
// stats: nginx's stub_status, HAProxy's stats page, Caddy's HTTP metrics
// (off in Caddy unless asked for, so asked for here); count makes Caddy
// keep its access log there too (it costs CPU).
func SidecarConfig(proxy string, s layout.Sidecar, count bool) ([]byte, error) {
	switch proxy {
	case ProxyNginx:
		return nginxingress.Config{Sidecar: &s}.Render()
	case ProxyHAProxy:
		return haproxy.Config{Sidecar: s}.Render()
	case ProxyCaddy:
		return caddy.Config{Sidecar: s, Dir: sidecarRunDir, AccessLog: count, Metrics: true}.Render()
	}
	return nil, fmt.Errorf("unknown proxy %q: want one of %s", proxy, strings.Join(SidecarProxies, ", "))
}

// sidecarIdentities is the Secret of a CA made for the run and the two
// workloads' certificates and keys (server.*, client.*).
func (o Options) sidecarIdentities() (*corev1.Secret, error) {
	dir, err := leftover.TempDir("sidecarca") // marked with the pid: loadgen cleanup's after a kill
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	ca, err := mtls.New(dir)
	if err != nil {
		return nil, err
	}
	data := map[string][]byte{}
	read := func(key, path string) error {
		b, err := os.ReadFile(path)
		data[key] = append(data[key], b...)
		return err
	}
	if err := read(keyCA, ca.RootFile()); err != nil {
		return nil, err
	}
	for _, side := range []struct {
		name       string
		self, peer mtls.Workload
	}{{"server", o.serverWorkload(), o.clientWorkload()}, {"client", o.clientWorkload(), o.serverWorkload()}} {
		files, _, err := ca.Issue(side.self, side.peer)
		if err != nil {
			return nil, err
		}
		for _, f := range []struct{ key, path string }{
			{side.name + ".crt", files.Cert}, {side.name + ".key", files.Key},
			{side.name + ".pem", files.Cert}, {side.name + ".pem", files.Key},
		} {
			if err := read(f.key, filepath.Clean(f.path)); err != nil {
				return nil, err
			}
			if strings.HasSuffix(f.key, ".pem") && !strings.HasSuffix(string(data[f.key]), "\n") {
				data[f.key] = append(data[f.key], '\n')
			}
		}
	}
	return &corev1.Secret{ObjectMeta: o.Meta(sidecarObject, o.Namespace, nil), Type: corev1.SecretTypeOpaque, Data: data}, nil
}

// PodSidecar is one pod's sidecar: the capture its init container
// installs and the proxy beside the app. --mesh sidecar renders it, and
// the test node's injection webhook injects it under Istio's and
// Linkerd's container names.
type PodSidecar struct {
	Proxy string // one of SidecarProxies
	Image string // the proxy's image
	// CaptureImage has loadgen as its entrypoint and iptables-restore.
	CaptureImage string
	// ProxyContainer and CaptureContainer are the containers' names.
	ProxyContainer, CaptureContainer string
	// Capture are `loadgen mesh capture`'s flags.
	Capture []string
	// Config holds the proxy's config file (SidecarConfigFile).
	Config corev1.VolumeSource
	// MTLS, when set, holds the workload's identity: ca.crt,
	// workload.crt, workload.key and workload.pem.
	MTLS *corev1.VolumeSource
	// Native runs the proxy as a native sidecar (an init container that
	// restarts always, Kubernetes 1.29 or later).
	Native bool
	// Uncaptured are the inbound ports the capture leaves out: probes on
	// them stay as they are.
	Uncaptured []int32
}

// Volumes of a sidecar.
const (
	volSidecarConf = "loadgen-sidecar-conf"
	volSidecarRun  = "loadgen-sidecar-run"
	volSidecarMTLS = "loadgen-sidecar-mtls"
)

// Inject adds the capture's init container, the proxy and their volumes
// to spec. The app's HTTP readiness probes become TCP ones, as Istio's
// probe rewrite takes them off the proxy's HTTP path: kubelet's probes
// would otherwise be requests of the proxy's own (its counters move
// without load), and fail against a proxy that requires mutual TLS.
func (s PodSidecar) Inject(spec *corev1.PodSpec) {
	root := &corev1.SecurityContext{
		RunAsUser: ptr.To[int64](0), RunAsNonRoot: ptr.To(false), AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem: ptr.To(true),
		Capabilities:           &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_ADMIN", "NET_RAW"}},
		SeccompProfile:         &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
	}
	capture := corev1.Container{
		Name:            s.CaptureContainer,
		Image:           s.CaptureImage,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Args:            append([]string{"mesh", "capture"}, s.Capture...),
		SecurityContext: root,
		// iptables' lock file.
		VolumeMounts: []corev1.VolumeMount{{Name: volSidecarRun, MountPath: "/run"}},
	}
	proxy := s.proxyContainer()
	if s.Native {
		proxy.RestartPolicy = ptr.To(corev1.ContainerRestartPolicyAlways)
		spec.InitContainers = append(spec.InitContainers, capture, proxy)
	} else {
		spec.InitContainers = append(spec.InitContainers, capture)
		spec.Containers = append(spec.Containers, proxy)
	}
	spec.Volumes = append(spec.Volumes,
		corev1.Volume{Name: volSidecarConf, VolumeSource: s.Config},
		corev1.Volume{Name: volSidecarRun, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}})
	if s.MTLS != nil {
		spec.Volumes = append(spec.Volumes, corev1.Volume{Name: volSidecarMTLS, VolumeSource: *s.MTLS})
	}
	for i := range spec.Containers {
		c := &spec.Containers[i]
		if c.Name == s.ProxyContainer || c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil ||
			slices.Contains(s.Uncaptured, c.ReadinessProbe.HTTPGet.Port.IntVal) {
			continue
		}
		c.ReadinessProbe.TCPSocket = &corev1.TCPSocketAction{Port: c.ReadinessProbe.HTTPGet.Port}
		c.ReadinessProbe.HTTPGet = nil
	}
}

// proxyContainer runs the proxy as Istio's istio-proxy user, in the
// foreground, its files in the run directory.
func (s PodSidecar) proxyContainer() corev1.Container {
	conf := sidecarConfDir + "/" + SidecarConfigFile(s.Proxy)
	var args []string
	env := []corev1.EnvVar{{Name: "HOME", Value: sidecarRunDir}}
	switch s.Proxy {
	case ProxyNginx:
		args = []string{"nginx", "-p", sidecarRunDir + "/", "-c", conf, "-e", "stderr"}
	case ProxyHAProxy:
		args = []string{"haproxy", "-db", "-f", conf}
	case ProxyCaddy:
		args = []string{"caddy", "run", "--config", conf}
		env = append(env, corev1.EnvVar{Name: "XDG_DATA_HOME", Value: sidecarRunDir + "/storage"},
			corev1.EnvVar{Name: "XDG_CONFIG_HOME", Value: sidecarRunDir + "/storage"})
	}
	c := corev1.Container{
		Name:            s.ProxyContainer,
		Image:           s.Image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Command:         args,
		WorkingDir:      sidecarRunDir,
		Env:             env,
		Ports: []corev1.ContainerPort{
			{Name: "lg-inbound", ContainerPort: layout.InboundPort, Protocol: corev1.ProtocolTCP},
			{Name: "lg-outbound", ContainerPort: layout.OutboundPort, Protocol: corev1.ProtocolTCP},
		},
		SecurityContext: &corev1.SecurityContext{
			RunAsUser: ptr.To[int64](layout.ProxyUID), RunAsGroup: ptr.To[int64](layout.ProxyGID), RunAsNonRoot: ptr.To(true),
			AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
			Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
		},
		// The app starts once the proxy accepts connections (a native
		// sidecar's startup probe holds the next container back).
		StartupProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(layout.InboundPort)}},
			PeriodSeconds: 1, FailureThreshold: 60},
		VolumeMounts: []corev1.VolumeMount{
			{Name: volSidecarConf, MountPath: sidecarConfDir, ReadOnly: true},
			{Name: volSidecarRun, MountPath: sidecarRunDir},
		},
	}
	if s.MTLS != nil {
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: volSidecarMTLS, MountPath: sidecarMTLSDir, ReadOnly: true})
		if s.Proxy == ProxyHAProxy { // its crt is workload.pem in the run directory
			c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: volSidecarMTLS, MountPath: sidecarRunDir + "/workload.pem", SubPath: "workload.pem", ReadOnly: true})
		}
	}
	return c
}

// podSidecar is --mesh sidecar's sidecar of the server's pod or a
// worker's: the direct port left out of both captures; a worker's
// capture takes the target's mesh port only, so that its other
// connections (the API server's clock) go where they were sent, as
// Envoy's passthrough would send them.
func (o Options) podSidecar(server bool, config string) PodSidecar {
	direct := strconv.Itoa(PortHTTPDirect)
	capture := []string{"--exclude-inbound-ports", "15090,15021,15020," + direct, "--exclude-outbound-ports", direct}
	side := "client"
	if server {
		side = "server"
	} else {
		capture = append(capture, "--include-outbound-ip-ranges", "", "--include-outbound-ports", strconv.Itoa(PortHTTP))
	}
	s := PodSidecar{Proxy: o.Sidecar.Proxy, Image: o.Sidecar.Image, CaptureImage: o.Image,
		ProxyContainer: ContainerSidecar, CaptureContainer: ContainerCapture, Capture: capture, Native: !o.Sidecar.NoNative,
		Uncaptured: []int32{PortHTTPDirect},
		Config:     corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: config}}}}
	if o.MTLS {
		s.MTLS = &corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: sidecarObject, Items: []corev1.KeyToPath{
			{Key: keyCA, Path: keyCA}, {Key: side + ".crt", Path: "workload.crt"}, {Key: side + ".key", Path: "workload.key"}, {Key: side + ".pem", Path: "workload.pem"},
		}}}
	}
	return s
}

// addSidecar gives a pod of --mesh sidecar its sidecar, when the mode
// places one on its side, configured by the ConfigMap config.
func (o Options) addSidecar(spec *corev1.PodSpec, server bool, config string) {
	if o.Mesh != MeshSidecar || server && !o.InjectServer() || !server && !o.InjectClient() {
		return
	}
	o.podSidecar(server, config).Inject(spec)
}

// hopSidecarConfig is the ConfigMap of the sidecar of hop i's target:
// the run's, or for a hop that calls the next one (--hops), its own,
// whose outbound side goes to the next hop.
func (o Options) hopSidecarConfig(i int) string {
	if i < 1 || i >= o.Hops {
		return sidecarObject
	}
	return sidecarObject + "-hop" + strconv.Itoa(i)
}

// CheckLoad refuses a load the mesh cannot carry: HTTP/3 where it cannot
// go (checkH3), and under --mesh sidecar anything but plain HTTP/1.1: its
// proxies are HTTP/1.1 proxies in front of the target's HTTP port (a gRPC
// or TCP connection through them would reach httpbin), and the client's
// speaks plain HTTP to its own sidecar.
func (o Options) CheckLoad(l Load, steps []Step) error {
	if o.Mesh != MeshSidecar {
		return o.checkH3(l, steps)
	}
	if l.Protocol != "" && l.Protocol != "http1" {
		return fmt.Errorf("--mesh sidecar carries HTTP/1.1 (its nginx, HAProxy and Caddy sidecars proxy the target's HTTP port), not protocol %s", l.Protocol)
	}
	for _, st := range steps {
		if st.UsesTarget() && !strings.HasPrefix(st.URL, "http://") {
			return fmt.Errorf("path %s: --mesh sidecar carries plain HTTP to the target (the sidecars originate mutual TLS with --mtls), not %s", st.Path, st.URL)
		}
	}
	return nil
}
