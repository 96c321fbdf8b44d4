package node

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admregv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"loadgen/meshes/k8s"
)

// The injection webhook plays, on the test node, the sidecar injectors
// of Istio and Linkerd as each documents its contract with a workload:
// which labels and annotations ask for a proxy, which ports and ranges
// its capture leaves out, what the proxy's container is called and how
// many threads it runs. Inside, the capture is loadgen's (`loadgen mesh
// capture`, Istio's rules) and the proxy a real HAProxy, nginx or Caddy:
// neither Envoy nor Linkerd's proxy can be built here. It checks
// loadgen's side of the contract — that `k8s run --mesh istio|linkerd`
// asks for what it means to, and measures what it says — not Istio or
// Linkerd themselves. It is a test fixture: nothing of it ships.

// The documented names the webhook reads and writes.
const (
	// Istio (istio.io/api, label and annotation references).
	istioNSLabel     = "istio-injection" // "enabled" or "disabled" on a namespace
	istioRevLabel    = "istio.io/rev"
	istioInject      = "sidecar.istio.io/inject" // "Specifies whether or not an Envoy sidecar should be automatically injected into the workload."
	istioNative      = "sidecar.istio.io/nativeSidecar"
	istioProxyConfig = "proxy.istio.io/config"
	istioExcludeIn   = "traffic.sidecar.istio.io/excludeInboundPorts"
	istioExcludeOut  = "traffic.sidecar.istio.io/excludeOutboundPorts"
	istioIncludeOut  = "traffic.sidecar.istio.io/includeOutboundIPRanges"
	istioExcludeIPs  = "traffic.sidecar.istio.io/excludeOutboundIPRanges"
	istioIncludePort = "traffic.sidecar.istio.io/includeOutboundPorts"
	istioStatus      = "sidecar.istio.io/status"
	// Linkerd (linkerd.io, proxy injection and proxy configuration).
	linkerdInject       = "linkerd.io/inject"
	linkerdSkipIn       = "config.linkerd.io/skip-inbound-ports"
	linkerdSkipOut      = "config.linkerd.io/skip-outbound-ports"
	linkerdNativeAlpha  = "config.alpha.linkerd.io/proxy-enable-native-sidecar"
	linkerdNativeBeta   = "config.beta.linkerd.io/proxy-enable-native-sidecar"
	linkerdProxyVersion = "linkerd.io/proxy-version"
)

// annSidecarConfig carries the proxy's rendered config to its container
// (a downward API volume): the webhook creates no object of its own.
const annSidecarConfig = "loadgen.dev/sidecar-config"

// istioExcludedInbound are the ports Istio's injector always leaves out
// of inbound capture (istio-iptables -d 15090,15021,15020): its own
// Prometheus, health and agent ports.
var istioExcludedInbound = []string{"15090", "15021", "15020"}

// InjectionConfig says what the webhook injects.
type InjectionConfig struct {
	// Proxy is the proxy inside istio-proxy and linkerd-proxy:
	// k8s.ProxyHAProxy (default), ProxyNginx or ProxyCaddy.
	Proxy string
	// ProxyImage is its image (SidecarImages), CaptureImage loadgen's.
	ProxyImage, CaptureImage string
	// Upstream is where a client's proxy sends what it captured: the
	// mesh's one HTTP service, HOST:PORT, "{namespace}" standing for the
	// pod's. A real mesh's proxy routes by destination; these proxies
	// forward to one upstream.
	Upstream string
	// AppPort is where a server's proxy delivers (the app's port).
	AppPort uint16
	// ExcludeOutboundIPRanges are left out of every pod's capture, as an
	// install's values.global.proxy.excludeIPRanges does: the API server's
	// Service address, which these proxies cannot pass through (Envoy's
	// and Linkerd's pass it on to its original destination).
	ExcludeOutboundIPRanges []string
	// BreakExclusionsIn breaks the contract on purpose in these
	// namespaces: the ports a pod asks to leave out are captured anyway (a
	// test shows that its checks see it).
	BreakExclusionsIn []string

	broken bool // the pod at hand is in one of them
}

// InjectionWebhook is the running webhook and its registration.
type InjectionWebhook struct {
	cfg    InjectionConfig
	n      *Node
	srv    *http.Server
	ln     net.Listener
	served chan error
	// Injected counts the pods it gave a proxy.
	injected chan string
}

// WebhookConfigName is its MutatingWebhookConfiguration.
const WebhookConfigName = "loadgen-injection-webhook"

// StartInjectionWebhook serves the webhook on the node's address, with
// a serving certificate of the node's CA, and registers it for pod
// creation: Istio's webhooks with the namespace and object selectors
// Istio's own configuration uses, Linkerd's for every namespace but
// kube-system (its injector reads annotations, which selectors cannot).
// Close deregisters it and stops serving.
func (n *Node) StartInjectionWebhook(ctx context.Context, cfg InjectionConfig) (*InjectionWebhook, error) {
	if cfg.Proxy == "" {
		cfg.Proxy = k8s.ProxyHAProxy
	}
	if cfg.AppPort == 0 {
		cfg.AppPort = k8s.PortHTTP
	}
	if cfg.ProxyImage == "" || cfg.CaptureImage == "" || cfg.Upstream == "" {
		return nil, errors.New("injection webhook: the proxy's and loadgen's images and the upstream are needed")
	}
	root, err := loadCA(n.pki.dir)
	if err != nil {
		return nil, err
	}
	leaf, err := root.issue("loadgen-injection-webhook", nil, []string{n.Addr.NodeIP}, true)
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(leaf.cert, leaf.key)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(n.Addr.NodeIP, "0"))
	if err != nil {
		return nil, err
	}
	w := &InjectionWebhook{cfg: cfg, n: n, ln: ln, served: make(chan error, 1), injected: make(chan string, 1024)}
	mux := http.NewServeMux()
	mux.HandleFunc("/inject/istio", w.handle(meshIstio))
	mux.HandleFunc("/inject/linkerd", w.handle(meshLinkerd))
	w.srv = &http.Server{Handler: mux, TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
		ReadHeaderTimeout: 10 * time.Second}
	go func() { w.served <- w.srv.ServeTLS(ln, "", "") }()
	if err := w.register(ctx, root.pem); err != nil {
		w.srv.Close()
		return nil, err
	}
	return w, nil
}

// Injected are the pods (namespace/name or generateName) given a proxy so far.
func (w *InjectionWebhook) Injected() []string {
	var out []string
	for {
		select {
		case p := <-w.injected:
			out = append(out, p)
		default:
			return out
		}
	}
}

// register creates the MutatingWebhookConfiguration.
func (w *InjectionWebhook) register(ctx context.Context, caPEM []byte) error {
	url := func(path string) *string { return ptr.To("https://" + w.ln.Addr().String() + path) }
	podRule := []admregv1.RuleWithOperations{{
		Operations: []admregv1.OperationType{admregv1.Create},
		Rule:       admregv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"pods"}},
	}}
	hook := func(name, path string, ns, obj *metav1.LabelSelector) admregv1.MutatingWebhook {
		return admregv1.MutatingWebhook{
			Name:                    name,
			ClientConfig:            admregv1.WebhookClientConfig{URL: url(path), CABundle: caPEM},
			Rules:                   podRule,
			NamespaceSelector:       ns,
			ObjectSelector:          obj,
			SideEffects:             ptr.To(admregv1.SideEffectClassNone),
			AdmissionReviewVersions: []string{"v1"},
			FailurePolicy:           ptr.To(admregv1.Fail),
			ReinvocationPolicy:      ptr.To(admregv1.NeverReinvocationPolicy),
			TimeoutSeconds:          ptr.To[int32](10),
		}
	}
	req := func(key string, op metav1.LabelSelectorOperator, values ...string) metav1.LabelSelectorRequirement {
		return metav1.LabelSelectorRequirement{Key: key, Operator: op, Values: values}
	}
	sel := func(reqs ...metav1.LabelSelectorRequirement) *metav1.LabelSelector {
		return &metav1.LabelSelector{MatchExpressions: reqs}
	}
	notFalse := sel(req(istioInject, metav1.LabelSelectorOpNotIn, "false"))
	cfg := &admregv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: WebhookConfigName, Labels: map[string]string{"app.kubernetes.io/managed-by": "loadgen-e2e"}},
		Webhooks: []admregv1.MutatingWebhook{
			// Istio's sidecar-injector webhooks: a namespace labelled
			// istio-injection=enabled, one with a revision, and a pod
			// labelled sidecar.istio.io/inject=true elsewhere.
			hook("namespace.sidecar-injector.istio.loadgen.local", "/inject/istio",
				sel(req(istioNSLabel, metav1.LabelSelectorOpIn, "enabled")), notFalse),
			hook("rev.namespace.sidecar-injector.istio.loadgen.local", "/inject/istio",
				sel(req(istioNSLabel, metav1.LabelSelectorOpDoesNotExist), req(istioRevLabel, metav1.LabelSelectorOpExists)), notFalse),
			hook("object.sidecar-injector.istio.loadgen.local", "/inject/istio",
				sel(req(istioNSLabel, metav1.LabelSelectorOpDoesNotExist), req(istioRevLabel, metav1.LabelSelectorOpDoesNotExist)),
				sel(req(istioInject, metav1.LabelSelectorOpIn, "true"))),
			// Linkerd's proxy injector: every namespace but the system's.
			hook("linkerd-proxy-injector.linkerd.loadgen.local", "/inject/linkerd",
				sel(req("kubernetes.io/metadata.name", metav1.LabelSelectorOpNotIn, "kube-system")), nil),
		},
	}
	c := w.n.Client.AdmissionregistrationV1().MutatingWebhookConfigurations()
	if err := c.Delete(ctx, WebhookConfigName, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	_, err := c.Create(ctx, cfg, metav1.CreateOptions{})
	return err
}

// Close deregisters the webhook (pods are created as they are again) and
// stops serving.
func (w *InjectionWebhook) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := w.n.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, WebhookConfigName, metav1.DeleteOptions{})
	if apierrors.IsNotFound(err) {
		err = nil
	}
	w.srv.Close()
	if serr := <-w.served; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}

// The meshes the webhook plays.
const (
	meshIstio   = "istio"
	meshLinkerd = "linkerd"
)

func (w *InjectionWebhook) handle(mesh string) http.HandlerFunc {
	return func(rw http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 4<<20))
		if err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		var review admissionv1.AdmissionReview
		if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
			http.Error(rw, fmt.Sprintf("not an AdmissionReview: %v", err), http.StatusBadRequest)
			return
		}
		resp := &admissionv1.AdmissionResponse{UID: review.Request.UID, Allowed: true}
		if patch, who, err := w.review(r.Context(), mesh, review.Request); err != nil {
			resp.Allowed, resp.Result = false, &metav1.Status{Message: "injection webhook: " + err.Error()}
		} else if patch != nil {
			resp.Patch, resp.PatchType = patch, ptr.To(admissionv1.PatchTypeJSONPatch)
			select {
			case w.injected <- who:
			default:
			}
		}
		review.Response, review.Request = resp, nil
		out, _ := json.Marshal(review)
		rw.Header().Set("Content-Type", "application/json")
		rw.Write(out)
	}
}

// review decides and makes the pod's patch; nil when nothing is injected.
func (w *InjectionWebhook) review(ctx context.Context, mesh string, req *admissionv1.AdmissionRequest) ([]byte, string, error) {
	var pod corev1.Pod
	if err := json.Unmarshal(req.Object.Raw, &pod); err != nil {
		return nil, "", err
	}
	ns, err := w.n.Client.CoreV1().Namespaces().Get(ctx, req.Namespace, metav1.GetOptions{})
	if err != nil {
		return nil, "", err
	}
	mutated, err := w.cfg.Inject(mesh, &pod, nsMeta(ns))
	if err != nil || mutated == nil {
		return nil, "", err
	}
	patch, err := json.Marshal([]map[string]any{
		{"op": "add", "path": "/metadata/annotations", "value": mutated.Annotations},
		{"op": "add", "path": "/spec/initContainers", "value": mutated.Spec.InitContainers},
		{"op": "add", "path": "/spec/containers", "value": mutated.Spec.Containers},
		{"op": "add", "path": "/spec/volumes", "value": mutated.Spec.Volumes},
	})
	who := req.Namespace + "/" + pod.Name
	if pod.Name == "" {
		who = req.Namespace + "/" + pod.GenerateName
	}
	return patch, who, err
}

// namespaceMeta is what the injectors read of a pod's namespace.
type namespaceMeta struct {
	Name                string
	Labels, Annotations map[string]string
}

// nsMeta is what the injectors read of a namespace.
func nsMeta(ns *corev1.Namespace) namespaceMeta {
	return namespaceMeta{Name: ns.Name, Labels: ns.Labels, Annotations: ns.Annotations}
}

// Inject returns pod with mesh's proxy, or nil when the mesh's documented
// rules give it none. The pod is not changed.
func (c InjectionConfig) Inject(mesh string, pod *corev1.Pod, ns namespaceMeta) (*corev1.Pod, error) {
	var side injection
	var ok bool
	var err error
	c.broken = slices.Contains(c.BreakExclusionsIn, ns.Name)
	switch mesh {
	case meshIstio:
		side, ok, err = c.istio(pod, ns)
	case meshLinkerd:
		side, ok, err = c.linkerd(pod, ns)
	default:
		return nil, fmt.Errorf("unknown mesh %q", mesh)
	}
	if err != nil || !ok {
		return nil, err
	}
	for _, ct := range append(slices.Clone(pod.Spec.InitContainers), pod.Spec.Containers...) {
		if ct.Name == side.proxyName {
			return nil, nil // injected already
		}
	}
	upstream := strings.ReplaceAll(c.Upstream, "{namespace}", ns.Name)
	conf, err := k8s.SidecarConfig(c.Proxy, k8s.SidecarLayout(c.Proxy, upstream, c.AppPort, side.workers), false)
	if err != nil {
		return nil, err
	}
	out := pod.DeepCopy()
	if out.Annotations == nil {
		out.Annotations = map[string]string{}
	}
	out.Annotations[annSidecarConfig] = string(conf)
	for k, v := range side.annotations {
		out.Annotations[k] = v
	}
	ps := k8s.PodSidecar{
		Proxy: c.Proxy, Image: c.ProxyImage, CaptureImage: c.CaptureImage,
		ProxyContainer: side.proxyName, CaptureContainer: side.initName, Capture: side.capture, Native: side.native,
		Uncaptured: side.uncaptured,
		Config: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{{
			Path: k8s.SidecarConfigFile(c.Proxy), FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['" + annSidecarConfig + "']"},
		}}}},
	}
	ps.Inject(&out.Spec)
	return out, nil
}

// injection is what a mesh's rules make of one pod.
type injection struct {
	proxyName, initName string
	capture             []string // loadgen mesh capture's flags
	uncaptured          []int32  // inbound ports left out
	native              bool
	workers             int
	annotations         map[string]string // what the injector records on the pod
}

// istio applies Istio's documented injection: "When you set the
// istio-injection=enabled label on a namespace and the injection webhook
// is enabled, any new pods that are created in that namespace will
// automatically have a sidecar added to them" (istio.io, Installing the
// Sidecar); a revision's namespaces are labelled istio.io/rev instead;
// the pod label sidecar.istio.io/inject "Specifies whether or not an
// Envoy sidecar should be automatically injected into the workload"
// ("false" keeps a pod out of an enabled namespace, "true" injects a pod
// of a namespace with neither label); the annotation of the same name is
// its deprecated form, the label wins.
func (c InjectionConfig) istio(pod *corev1.Pod, ns namespaceMeta) (injection, bool, error) {
	podInject, set := pod.Labels[istioInject]
	if !set {
		podInject, set = pod.Annotations[istioInject]
	}
	nsLabel, nsRev := ns.Labels[istioNSLabel], ns.Labels[istioRevLabel] != ""
	switch {
	case set && podInject == "false", nsLabel == "disabled":
		return injection{}, false, nil
	case nsLabel == "enabled", nsLabel == "" && nsRev, set && podInject == "true":
	default:
		return injection{}, false, nil
	}
	a := pod.Annotations
	inj := injection{proxyName: "istio-proxy", initName: "istio-init", workers: 2,
		annotations: map[string]string{istioStatus: `{"initContainers":["istio-init"],"containers":["istio-proxy"]}`}}
	// "Specifies if the istio-proxy sidecar should be injected as a native
	// sidecar or not."
	inj.native = a[istioNative] == "true"
	// proxy.istio.io/config: "Overrides for the proxy configuration for
	// this specific proxy" — ProxyConfig's concurrency is the worker
	// threads (Istio's default 2).
	if cfg := a[istioProxyConfig]; cfg != "" {
		var pc struct {
			Concurrency *int `json:"concurrency"`
		}
		if err := yaml.Unmarshal([]byte(cfg), &pc); err != nil {
			return injection{}, false, fmt.Errorf("%s: %v", istioProxyConfig, err)
		}
		if pc.Concurrency != nil {
			inj.workers = *pc.Concurrency
		}
	}
	// excludeInboundPorts: "A comma separated list of inbound ports to be
	// excluded from redirection to Envoy. Only applies when all inbound
	// traffic (i.e. '*') is being redirected."
	in, err := c.ports(a[istioExcludeIn])
	if err != nil {
		return injection{}, false, fmt.Errorf("%s: %w", istioExcludeIn, err)
	}
	// excludeOutboundPorts: "A comma separated list of outbound ports to be
	// excluded from redirection to Envoy."
	out, err := c.ports(a[istioExcludeOut])
	if err != nil {
		return injection{}, false, fmt.Errorf("%s: %w", istioExcludeOut, err)
	}
	// includeOutboundIPRanges: "A comma separated list of IP ranges in CIDR
	// form to redirect to Envoy (optional). The wildcard character '*' can
	// be used to redirect all outbound traffic. An empty list will disable
	// all outbound redirection."
	include, set := a[istioIncludeOut]
	if !set {
		include = "*"
	}
	// excludeOutboundIPRanges: "A comma separated list of IP ranges in
	// CIDR form to be excluded from redirection. Only applies when all
	// outbound traffic (i.e. '*') is being redirected."
	exclude := slices.Clone(c.ExcludeOutboundIPRanges)
	if v := a[istioExcludeIPs]; v != "" {
		exclude = append(exclude, strings.Split(v, ",")...)
	}
	inj.capture = []string{"--exclude-inbound-ports", strings.Join(append(slices.Clone(istioExcludedInbound), in...), ","),
		"--exclude-outbound-ports", strings.Join(out, ","),
		"--include-outbound-ip-ranges", strings.TrimSpace(include),
		"--exclude-outbound-ip-ranges", strings.Join(exclude, ","),
		"--include-outbound-ports", a[istioIncludePort]}
	inj.uncaptured = toPorts(in)
	return inj, true, nil
}

// linkerd applies Linkerd's: "Linkerd automatically adds the data plane
// proxy to pods when the linkerd.io/inject: enabled annotation is present
// on a namespace or any workloads, such as deployments or pods", and
// "Automatic injection can be disabled for a pod or deployment for which
// it would otherwise be enabled, by adding the linkerd.io/inject:
// disabled annotation" (linkerd.io, Automatic Proxy Injection). Its
// proxy runs one worker unless told otherwise.
func (c InjectionConfig) linkerd(pod *corev1.Pod, ns namespaceMeta) (injection, bool, error) {
	a := pod.Annotations
	switch v := a[linkerdInject]; {
	case v == "disabled":
		return injection{}, false, nil
	case v == "enabled", v == "" && ns.Annotations[linkerdInject] == "enabled":
	default:
		return injection{}, false, nil
	}
	inj := injection{proxyName: "linkerd-proxy", initName: "linkerd-init", workers: 1,
		annotations: map[string]string{linkerdProxyVersion: "loadgen-e2e"}}
	// "Enable KEP-753 native sidecars." (the alpha name is deprecated in
	// favour of the beta one).
	inj.native = a[linkerdNativeBeta] == "true" || a[linkerdNativeAlpha] == "true"
	// skip-inbound-ports: "Ports and/or port ranges (inclusive) that should
	// skip the proxy and send directly to the application";
	// skip-outbound-ports: "Outbound ports and/or port ranges (inclusive)
	// that should skip the proxy".
	in, err := c.ports(a[linkerdSkipIn])
	if err != nil {
		return injection{}, false, fmt.Errorf("%s: %w", linkerdSkipIn, err)
	}
	out, err := c.ports(a[linkerdSkipOut])
	if err != nil {
		return injection{}, false, fmt.Errorf("%s: %w", linkerdSkipOut, err)
	}
	inj.capture = []string{"--exclude-inbound-ports", strings.Join(in, ","), "--exclude-outbound-ports", strings.Join(out, ","),
		"--exclude-outbound-ip-ranges", strings.Join(c.ExcludeOutboundIPRanges, ",")}
	inj.uncaptured = toPorts(in)
	return inj, true, nil
}

// ports reads a comma-separated list of ports and inclusive ranges
// ("8081,9000-9002"); in a namespace of BreakExclusionsIn, none.
func (c InjectionConfig) ports(list string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(f, "-")
		a, err1 := strconv.ParseUint(lo, 10, 16)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.ParseUint(hi, 10, 16)
		}
		if err1 != nil || err2 != nil || a == 0 || b < a || b-a > 1024 {
			return nil, fmt.Errorf("%q is not a port or a range of ports", f)
		}
		for p := a; p <= b; p++ {
			out = append(out, strconv.FormatUint(p, 10))
		}
	}
	if c.broken {
		return nil, nil
	}
	return out, nil
}

func toPorts(ps []string) []int32 {
	var out []int32
	for _, p := range ps {
		n, _ := strconv.Atoi(p)
		out = append(out, int32(n))
	}
	return out
}
