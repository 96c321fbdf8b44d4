package k8s

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"loadgen/results"
)

// Load is what every step of a sweep shares (loadgen/sweep's Spec, less
// the plan).
type Load struct {
	Protocol string // empty: http1
	Endpoint string // HTTP path, {size} becomes the payload; empty for grpc/tcp
	Duration time.Duration
	Warmup   time.Duration
	Timeout  time.Duration
	Call     string
	Data     string
	// Arrival and JitterPct are the open-loop steps' arrival process,
	// `loadgen run`'s --arrival and --jitter on every step with a rate
	// (a closed-loop step has none): "" (uniform, evenly spaced) or
	// poisson; each gap of the uniform schedule varied by up to
	// ±JitterPct %.
	Arrival   string
	JitterPct float64
	// Messages and Window are `loadgen run`'s --messages (protocol
	// grpc-server-stream or grpc-client-stream) and --window
	// (grpc-stream); 0: run's default.
	Messages int
	Window   int
	// Labels name every worker's run (--label), and so the merged one.
	Labels results.Labels
	// ClientCerts are the paths' client certificates, which the run puts
	// in its ClientCertSecret for the steps that name them.
	ClientCerts []ClientCert
}

// Step is one step of the plan, as loadgen/sweep lays it out.
type Step struct {
	Index    int
	ID       string
	Path     string
	Baseline bool
	URL      string // the path's URL; host "target" is the comparison's target through the mesh
	NewConn  bool
	Insecure bool
	// ClientCert names the path's client certificate in the run's
	// ClientCertSecret; empty: none.
	ClientCert  string
	Connections int
	Threads     int
	Payload     int
	Rate        float64
	Repeat      int
}

// UsesTarget tells whether the step loads the comparison's target.
func (st Step) UsesTarget() bool {
	return strings.Contains(st.URL, "://"+TargetHost+":") || strings.HasSuffix(st.URL, "://"+TargetHost) ||
		strings.Contains(st.URL, "://"+TargetHost+"/")
}

// TargetHost in a sweep path's URL stands for the comparison's target:
// http://target:8080 goes through the mesh (the ingress or the gateway),
// http://target:8081 to the same pods outside sidecar capture; gRPC's
// ports are 9090 and 9091, raw TCP's 9000 and 9001, HTTP/3's direct port
// UDP 8443 (a step of gRPC, TCP or HTTP/3 load to the direct port 8081
// goes to its protocol's direct port).
const TargetHost = "target"

// Addresses are where an ingress's or a gateway's mesh path is reached,
// as the cluster published them: the HTTP routes' and the gRPC route's
// (Amazon VPC Lattice gives each route a domain of its own).
type Addresses struct {
	HTTP string `json:"http,omitempty"`
	GRPC string `json:"grpc,omitempty"`
}

// ClassLattice is Amazon VPC Lattice's GatewayClass, where AWS sends App
// Mesh users.
const ClassLattice = "amazon-vpc-lattice"

// AnnLatticeDomain is the annotation the AWS Gateway API controller sets
// on an HTTPRoute or GRPCRoute: the Lattice service's domain, the route's
// address (Lattice publishes no Gateway status.addresses).
const AnnLatticeDomain = "application-networking.k8s.aws/lattice-assigned-domain-name"

// gatewayService is the Service a Gateway of a class is reached by, where
// the implementation documents its name: Istio and NGINX Gateway Fabric
// name it <gateway>-<class>, Cilium cilium-gateway-<gateway>. Other
// implementations (Envoy Gateway, Traefik, Lattice) publish their address
// only in the cluster: k8s run reads it.
func (o Options) gatewayService() (string, bool) {
	switch o.Class {
	case "istio", "nginx":
		return fmt.Sprintf("%s-%s.%s.svc.cluster.local", o.GatewayObject(), o.Class, o.Namespace), true
	case "cilium":
		return fmt.Sprintf("cilium-gateway-%s.%s.svc.cluster.local", o.GatewayObject(), o.Namespace), true
	}
	return "", false
}

// LabelGatewayName is the label Gateway API implementations put on the
// objects they make for a Gateway, its Service among them (GEP-1762).
const LabelGatewayName = "gateway.networking.k8s.io/gateway-name"

// errNoAddress is a gateway whose address only the cluster knows.
type errNoAddress struct{ o Options }

func (e errNoAddress) Error() string {
	if e.o.ViaOf() == ViaService {
		// The workers load the controller's Service, which the run finds
		// in the cluster.
		if e.o.UsesIngress() {
			return fmt.Sprintf("ingress class %s: the address is its controller's Service (--via service), which only the cluster knows "+
				"(k8s run finds it at Ingress %s/%s's status.loadBalancer.ingress); name it with --ingress-service NAMESPACE/NAME", e.o.Class, e.o.Namespace, TargetName)
		}
		return fmt.Sprintf("class %s: the address is the Service its implementation labels %s=%s for Gateway %s/%s (--via service), "+
			"which only the cluster knows (k8s run finds it); name it with --ingress-service NAMESPACE/NAME", e.o.Class, LabelGatewayName, e.o.GatewayObject(), e.o.Namespace, e.o.GatewayObject())
	}
	if e.o.UsesIngress() {
		return fmt.Sprintf("ingress class %s: the address is Ingress %s/%s's status.loadBalancer.ingress, which only the cluster knows (k8s run reads it)", e.o.Class, e.o.Namespace, TargetName)
	}
	if e.o.Class == ClassLattice {
		return fmt.Sprintf("class %s: the address is the routes' %s annotation, which only the cluster knows (k8s run reads it)", e.o.Class, AnnLatticeDomain)
	}
	return fmt.Sprintf("class %s: the address is Gateway %s/%s's status.addresses, which only the cluster knows (k8s run reads it)", e.o.Class, e.o.Namespace, e.o.GatewayObject())
}

// URL is the address workers load for a target port through the mesh,
// without the cluster: the target's Service for sidecar and ambient
// meshes, the ingress controller's Service (as its chart names it), or
// the Gateway's Service where its implementation documents the name.
func (o Options) URL(port int) (string, error) {
	return o.resolve("http://"+TargetHost+":"+strconv.Itoa(port), Addresses{})
}

// resolve turns a path URL into the address the workers load: host
// "target" becomes the target's Service, or for the mesh ports behind an
// ingress or a gateway, the address the cluster published (addr) or,
// without it, the Service the implementation is documented to create;
// any other URL is used as given.
func (o Options) resolve(raw string, addr Addresses) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("url %q: %v", raw, err)
	}
	if u.Hostname() != TargetHost {
		return raw, nil
	}
	port, _ := strconv.Atoi(u.Port())
	if port == 0 {
		port = PortHTTP
	}
	host := fmt.Sprintf("%s.%s.svc.cluster.local", TargetName, o.Namespace)
	if DirectPort(port) && o.DirectTarget() {
		host = fmt.Sprintf("%s.%s.svc.cluster.local", TargetDirectName, o.Namespace)
	}
	if !DirectPort(port) {
		published := addr.HTTP
		if port == PortGRPC {
			published = addr.GRPC
		}
		if ns, name, ok := strings.Cut(o.IngressService, "/"); ok && published == "" && o.ViaOf() == ViaService {
			published = name + "." + ns + ".svc.cluster.local" // --ingress-service
		}
		switch o.Mesh {
		case MeshIngressNginx, MeshIngress:
			host, port = fmt.Sprintf("%s.%s.svc.cluster.local", IngressControllerConfigMap, o.IngressNamespace), 80
			if u.Scheme == "https" {
				port = 443
			}
			switch {
			case published != "":
				host = published
			case o.Mesh == MeshIngress:
				return "", errNoAddress{o}
			}
		case MeshGateway:
			switch port {
			case PortGRPC:
				port = GatewayPortGRPC
			case PortTCP:
				port = GatewayPortTCP
			default:
				port = GatewayPortHTTP
			}
			switch svc, ok := o.gatewayService(); {
			case published != "":
				host = published
			case ok:
				host = svc
			default:
				return "", errNoAddress{o}
			}
		}
	}
	u.Host = net.JoinHostPort(host, strconv.Itoa(port))
	return u.String(), nil
}

// DirectURL tells whether a path's URL is the comparison's direct path
// (host "target", a direct port: 8081, 9091, 9001): the baseline, which
// crosses no proxy.
func DirectURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() != TargetHost {
		return false
	}
	p, _ := strconv.Atoi(u.Port())
	return DirectPort(p)
}

// directFor sends a step of gRPC, raw TCP or HTTP/3 load to the direct
// path's HTTP port (8081, where httpbin answers) to its protocol's direct
// port instead: the direct path of that protocol (HTTP/3's is UDP 8443).
func directFor(protocol, raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() != TargetHost || u.Port() != strconv.Itoa(PortHTTPDirect) {
		return raw
	}
	switch {
	case strings.HasPrefix(protocol, "grpc"):
		u.Host = net.JoinHostPort(TargetHost, strconv.Itoa(PortGRPCDirect))
	case strings.HasPrefix(protocol, "tcp"):
		u.Host = net.JoinHostPort(TargetHost, strconv.Itoa(PortTCPDirect))
	case protocol == ProtocolH3:
		u.Host = net.JoinHostPort(TargetHost, strconv.Itoa(PortHTTPSDirect))
	default:
		return raw
	}
	return u.String()
}

// RunArgs are `loadgen run`'s flags for a step, less the shares the worker
// adds (-c, -t, -R), with the URL last.
func (o Options) RunArgs(l Load, st Step, addr Addresses) ([]string, error) {
	target, err := o.resolve(directFor(l.Protocol, st.URL), addr)
	if err != nil {
		return nil, err
	}
	a := []string{"-q", "-d", l.Duration.String()}
	if l.Protocol != "" {
		a = append(a, "-p", l.Protocol)
	}
	if l.Warmup > 0 {
		a = append(a, "--warmup", l.Warmup.String())
	}
	if l.Timeout > 0 {
		a = append(a, "--timeout", l.Timeout.String())
	}
	if st.Rate > 0 {
		// The worker adds its share of the rate (-R); run refuses an
		// arrival process without one.
		if l.Arrival != "" {
			a = append(a, "--arrival", l.Arrival)
		}
		if l.JitterPct != 0 {
			a = append(a, "--jitter", strconv.FormatFloat(l.JitterPct, 'f', -1, 64)+"%")
		}
	}
	if l.Messages > 0 {
		a = append(a, "--messages", strconv.Itoa(l.Messages))
	}
	if l.Window > 0 {
		a = append(a, "--window", strconv.Itoa(l.Window))
	}
	if st.NewConn {
		a = append(a, "--new-conn")
	}
	if o.UsesIngress() && !DirectURL(st.URL) && st.UsesTarget() {
		// The Ingress's rule and certificate are for IngressHost; gRPC's
		// Ingress is IngressGRPCHost's.
		host := IngressHost
		if st.Route() == RouteGRPC {
			host = IngressGRPCHost
		}
		a = append(a, "-H", "Host: "+host)
		if strings.HasPrefix(st.URL, "https:") {
			a = append(a, "--sni", host)
		}
	}
	if st.Insecure {
		a = append(a, "--insecure")
	}
	if st.ClientCert != "" {
		a = append(a, ClientCertArgs(st.ClientCert)...)
	}
	if l.Call != "" {
		a = append(a, "--call", l.Call)
		if l.Data != "" {
			a = append(a, "--data", l.Data)
		}
	}
	if l.Endpoint != "" {
		target = strings.TrimRight(target, "/") + strings.ReplaceAll(l.Endpoint, "{size}", strconv.Itoa(st.Payload))
	} else if l.Call == "" {
		a = append(a, "--size", strconv.Itoa(st.Payload))
	}
	a = append(a, l.Labels.Flags()...)
	return append(a, target), nil
}

// urlPort is a URL's port, 0 when it has none.
func urlPort(raw string) int {
	u, err := url.Parse(raw)
	if err != nil {
		return 0
	}
	p, _ := strconv.Atoi(u.Port())
	return p
}

// urlScheme is a URL's scheme, "" when it does not parse.
func urlScheme(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Scheme
}

// JobName is the Job of step i of run id.
func JobName(runID string, index int) string { return fmt.Sprintf("lg-%s-%d", runID, index) }
