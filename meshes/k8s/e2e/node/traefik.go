package node

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/dynamic"
	"k8s.io/utils/ptr"
)

// Traefik is the real gateway and ingress controller the node can run:
// built from its Go module, in an image made here, deployed as a pod with
// the RBAC its documentation lists (kubernetes-gateway-rbac.yml and the
// Ingress provider's), serving the Gateway API (GatewayClass traefik) and
// Ingresses (IngressClass traefik).
//
// v3.6.12 is the newest Traefik that builds here: v3.7's module replaces
// github.com/traefik/traefik/dynamic/ext with a directory its module zip
// does not hold (a module of its own, which the Go module proxy does not
// serve), and its ACME library (lego v5) needs DNS providers' modules the
// proxy refuses. v3.6 supports the Gateway API's standard channel v1.4.
const (
	TraefikModule  = "github.com/traefik/traefik/v3"
	TraefikVersion = "v3.6.12"
	TraefikRepo    = "loadgen.local/traefik"
)

// The names Traefik goes by on the node.
const (
	TraefikNamespace  = "traefik"
	TraefikName       = "traefik"
	TraefikClass      = "traefik" // the GatewayClass and the IngressClass
	TraefikGatewayCtl = "traefik.io/gateway-controller"
	TraefikIngressCtl = "traefik.io/ingress-controller"
)

// BuildTraefik builds Traefik's binary, static, from its module at
// TraefikVersion, or finds it built in the node's build cache; it returns
// its path. The build runs in the module's own directory (its go.mod has
// replaces, which `go install module@version` refuses).
func BuildTraefik(ctx context.Context, o BuildOptions) (string, error) {
	cache, err := cacheDir(o.Cache)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(cache, "traefik-"+TraefikVersion, "traefik")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	t0 := time.Now()
	if o.Log != nil {
		fmt.Fprintf(o.Log, "node build: building Traefik %s from its module (a cold build takes minutes)\n", TraefikVersion)
	}
	cmd := exec.CommandContext(ctx, goCommand(), "mod", "download", "-json", TraefikModule+"@"+TraefikVersion)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %v", TraefikModule, TraefikVersion, err)
	}
	var mod struct{ Dir, Error string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %s%v", TraefikModule, TraefikVersion, mod.Error, err)
	}
	tmp := bin + ".tmp"
	ldflags := "-s -w -X " + TraefikModule + "/pkg/version.Version=" + TraefikVersion
	args := []string{"build", "-trimpath", "-ldflags", ldflags, "-o", tmp, "./cmd/traefik"}
	if err := goToolNice(ctx, o.Nice, mod.Dir, []string{"CGO_ENABLED=0"}, args...); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, bin); err != nil {
		return "", err
	}
	if o.Log != nil {
		fmt.Fprintf(o.Log, "node build: Traefik %s built in %v\n", TraefikVersion, time.Since(t0).Round(time.Second))
	}
	return bin, nil
}

// TraefikInstall is Traefik running on the node.
type TraefikInstall struct {
	// ClusterIP is its Service's address: what it publishes as its
	// Gateways' and Ingresses' address (a cluster without a load
	// balancer), where the Service's ports 80 (HTTP), 443 (HTTPS, and
	// HTTP/3 on UDP 443) and 9090 (the Gateway's gRPC listener) are.
	ClusterIP string
	// Selector is its pods' label selector.
	Selector string
	n        *Node
	dyn      dynamic.Interface
}

var gatewayClassGVR = schema.GroupVersionResource{Group: "gateway.networking.k8s.io", Version: "v1", Resource: "gatewayclasses"}

// traefikLabels are its pods', as its Helm chart labels them.
var traefikLabels = map[string]string{"app.kubernetes.io/name": "traefik", "app.kubernetes.io/instance": "traefik"}

// InstallTraefik imports Traefik's image (bin, from BuildTraefik) and
// deploys it, with its GatewayClass and IngressClass, once the Gateway
// API's CRDs are installed; it returns when its pod is ready and its
// GatewayClass accepted. Uninstall removes all of it.
func (n *Node) InstallTraefik(ctx context.Context, bin string) (*TraefikInstall, error) {
	// Traefik runs as a user without privileges, binding ports below
	// 1024 through the pod's (namespaced, safe) unprivileged-port sysctl.
	im, err := writeImage(n.Dir, TraefikRepo, bin, "/traefik", loadgenUser)
	if err != nil {
		return nil, err
	}
	if _, err := run(ctx, "ctr", "--address", n.paths.containerdSock, "-n", "k8s.io", "images", "import", im.archive); err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(n.RESTConfig)
	if err != nil {
		return nil, err
	}
	tr := &TraefikInstall{n: n, dyn: dyn, Selector: "app.kubernetes.io/name=traefik,app.kubernetes.io/instance=traefik"}
	c := n.Client
	ns := TraefikNamespace
	create := func(what string, err error) error {
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("traefik: create %s: %w", what, err)
		}
		return nil
	}
	if err := create("namespace", err2(c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}))); err != nil {
		return nil, err
	}
	if err := n.waitServiceAccount(ctx, ns); err != nil {
		return nil, err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: TraefikName, Namespace: ns}}
	if err := create("service account", err2(c.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}))); err != nil {
		return nil, err
	}
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "loadgen-traefik"}, Rules: traefikRules()}
	if err := create("cluster role", err2(c.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}))); err != nil {
		return nil, err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "loadgen-traefik"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: role.Name},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa.Name, Namespace: ns}},
	}
	if err := create("cluster role binding", err2(c.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}))); err != nil {
		return nil, err
	}
	svc := traefikService()
	created, err := c.CoreV1().Services(ns).Create(ctx, svc, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		created, err = c.CoreV1().Services(ns).Get(ctx, svc.Name, metav1.GetOptions{})
	}
	if err != nil {
		return nil, fmt.Errorf("traefik: service: %w", err)
	}
	tr.ClusterIP = created.Spec.ClusterIP
	if err := create("deployment", err2(c.AppsV1().Deployments(ns).Create(ctx, traefikDeployment(im.ref, tr.ClusterIP), metav1.CreateOptions{}))); err != nil {
		return nil, err
	}
	ic := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: TraefikClass}, Spec: networkingv1.IngressClassSpec{Controller: TraefikIngressCtl}}
	if err := create("ingress class", err2(c.NetworkingV1().IngressClasses().Create(ctx, ic, metav1.CreateOptions{}))); err != nil {
		return nil, err
	}
	gc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
		"metadata": map[string]any{"name": TraefikClass},
		"spec":     map[string]any{"controllerName": TraefikGatewayCtl},
	}}
	if err := create("gateway class", err2(dyn.Resource(gatewayClassGVR).Create(ctx, gc, metav1.CreateOptions{}))); err != nil {
		return nil, err
	}
	if err := tr.wait(ctx); err != nil {
		return tr, err
	}
	return tr, nil
}

func err2[T any](_ T, err error) error { return err }

// wait waits for Traefik's pod to be ready and its GatewayClass accepted.
func (tr *TraefikInstall) wait(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var why string
	for {
		d, err := tr.n.Client.AppsV1().Deployments(TraefikNamespace).Get(ctx, TraefikName, metav1.GetOptions{})
		switch {
		case err != nil:
			why = err.Error()
		case d.Status.ReadyReplicas < 1:
			why = "its pod is not ready"
		default:
			gc, err := tr.dyn.Resource(gatewayClassGVR).Get(ctx, TraefikClass, metav1.GetOptions{})
			if err == nil && accepted(gc) {
				return nil
			}
			why = "GatewayClass traefik is not accepted"
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("traefik: not up within 2 minutes: %s\n%s", why, tr.Logs(ctx))
		case <-time.After(time.Second):
		}
	}
}

func accepted(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == "Accepted" && m["status"] == "True" {
			return true
		}
	}
	return false
}

// Logs are the last lines Traefik's pods printed, for a failure.
func (tr *TraefikInstall) Logs(ctx context.Context) string {
	ctx = context.WithoutCancel(ctx)
	l, err := tr.n.Client.CoreV1().Pods(TraefikNamespace).List(ctx, metav1.ListOptions{LabelSelector: tr.Selector})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, p := range l.Items {
		raw, err := tr.n.Client.CoreV1().Pods(TraefikNamespace).GetLogs(p.Name, &corev1.PodLogOptions{TailLines: ptr.To[int64](30)}).DoRaw(ctx)
		fmt.Fprintf(&b, "== pod %s (%s): %v\n%s\n", p.Name, p.Status.Phase, err, raw)
	}
	return b.String()
}

// Uninstall removes Traefik, its classes and its RBAC, and waits for its
// namespace to be gone.
func (tr *TraefikInstall) Uninstall(ctx context.Context) error {
	c := tr.n.Client
	var errs []string
	gone := func(what string, err error) {
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, what+": "+err.Error())
		}
	}
	fg := metav1.DeletePropagationForeground
	del := metav1.DeleteOptions{PropagationPolicy: &fg}
	gone("gateway class", tr.dyn.Resource(gatewayClassGVR).Delete(ctx, TraefikClass, del))
	gone("ingress class", c.NetworkingV1().IngressClasses().Delete(ctx, TraefikClass, del))
	gone("namespace", c.CoreV1().Namespaces().Delete(ctx, TraefikNamespace, del))
	gone("cluster role binding", c.RbacV1().ClusterRoleBindings().Delete(ctx, "loadgen-traefik", del))
	gone("cluster role", c.RbacV1().ClusterRoles().Delete(ctx, "loadgen-traefik", del))
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, err := c.CoreV1().Namespaces().Get(ctx, TraefikNamespace, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			errs = append(errs, "namespace traefik not gone within 2 minutes")
			break
		}
		time.Sleep(time.Second)
	}
	if len(errs) > 0 {
		return fmt.Errorf("traefik uninstall: %s", strings.Join(errs, "; "))
	}
	return nil
}

// traefikRules are the RBAC rules Traefik's documentation lists for its
// Kubernetes Gateway provider (kubernetes-gateway-rbac.yml) and its
// Ingress provider, together.
func traefikRules() []rbacv1.PolicyRule {
	return []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"list", "watch"}},
		{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get"}},
		{APIGroups: []string{""}, Resources: []string{"services", "secrets", "configmaps", "nodes"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses", "ingressclasses"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingresses/status"}, Verbs: []string{"update"}},
		{APIGroups: []string{"gateway.networking.k8s.io"}, Resources: []string{"gatewayclasses", "gateways", "httproutes", "grpcroutes",
			"tcproutes", "tlsroutes", "referencegrants", "backendtlspolicies"}, Verbs: []string{"get", "list", "watch"}},
		{APIGroups: []string{"gateway.networking.k8s.io"}, Resources: []string{"gatewayclasses/status", "gateways/status", "httproutes/status",
			"grpcroutes/status", "tcproutes/status", "tlsroutes/status", "referencegrants/status", "backendtlspolicies/status"}, Verbs: []string{"update"}},
	}
}

// traefikH3Port is the name of Traefik's UDP 443, where websecure
// serves HTTP/3, in its pod and its Service.
const traefikH3Port = "websecure-h3"

// traefikPort is one of Traefik's ports, as its container and its
// Service name it.
type traefikPort struct {
	name  string
	port  int32
	proto corev1.Protocol
}

// traefikPorts are Traefik's entry points' ports: web, websecure (TCP,
// and UDP for its HTTP/3), grpc and ping (the probes', not in the
// Service).
var traefikPorts = []traefikPort{{"web", 80, corev1.ProtocolTCP}, {"websecure", 443, corev1.ProtocolTCP},
	{traefikH3Port, 443, corev1.ProtocolUDP}, {"grpc", 9090, corev1.ProtocolTCP}, {"ping", 8082, corev1.ProtocolTCP}}

// traefikService is Traefik's Service: its entry points' ports, 443
// twice, TCP and UDP (QUIC reaches HTTP/3 through kube-proxy's UDP rules
// of the cluster IP), each port named, as a Service of several ports
// needs.
func traefikService() *corev1.Service {
	var ports []corev1.ServicePort
	for _, p := range traefikPorts {
		if p.name != "ping" {
			ports = append(ports, corev1.ServicePort{Name: p.name, Port: p.port, TargetPort: intstr.FromString(p.name), Protocol: p.proto})
		}
	}
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: TraefikName, Namespace: TraefikNamespace, Labels: traefikLabels},
		Spec:       corev1.ServiceSpec{Selector: traefikLabels, Ports: ports},
	}
}

// traefikDeployment runs Traefik with its Gateway API and Ingress
// providers: entry points web (:80, the Gateway's HTTP listener and
// Ingresses), websecure (:443, TLS, Ingresses, and HTTP/3 on UDP 443)
// and grpc (:9090, the Gateway's gRPC listener), publishing addr as its
// Gateways' and Ingresses' address; ping on its own entry point for the
// probes.
func traefikDeployment(image, addr string) *appsv1.Deployment {
	args := []string{
		"--entryPoints.web.address=:80",
		"--entryPoints.websecure.address=:443",
		"--entryPoints.websecure.http.tls=true",
		// Traefik v3.6's entry point reference: "http3: Enable HTTP/3
		// protocol on the entryPoint. HTTP/3 requires a TCP entryPoint.
		// as HTTP/3 always starts as a TCP connection that then gets
		// upgraded to UDP"; its "HTTP3" section: "the underlying HTTP/3
		// server that is started automatically listens on UDP port N
		// too". "http3.advertisedPort: Set the UDP port to advertise as
		// the HTTP/3 authority. It defaults to the entryPoint's address
		// port": the Service's 443, the container's too.
		"--entryPoints.websecure.http3=true",
		"--entryPoints.websecure.http3.advertisedPort=443",
		"--entryPoints.grpc.address=:9090",
		"--entryPoints.ping.address=:8082",
		"--ping.entryPoint=ping",
		"--providers.kubernetesgateway=true",
		"--providers.kubernetesgateway.statusaddress.ip=" + addr,
		"--providers.kubernetesingress=true",
		"--providers.kubernetesingress.ingressendpoint.ip=" + addr,
		"--log.level=INFO",
	}
	var ports []corev1.ContainerPort
	for _, p := range traefikPorts {
		ports = append(ports, corev1.ContainerPort{Name: p.name, ContainerPort: p.port, Protocol: p.proto})
	}
	probe := &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/ping", Port: intstr.FromInt32(8082)}},
		PeriodSeconds: 2, FailureThreshold: 3}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: TraefikName, Namespace: TraefikNamespace, Labels: traefikLabels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: traefikLabels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: traefikLabels},
				Spec: corev1.PodSpec{
					ServiceAccountName: TraefikName,
					SecurityContext: &corev1.PodSecurityContext{
						Sysctls: []corev1.Sysctl{{Name: "net.ipv4.ip_unprivileged_port_start", Value: "0"}},
					},
					Containers: []corev1.Container{{
						Name: "traefik", Image: image, ImagePullPolicy: corev1.PullNever, Args: args,
						Ports:          ports,
						ReadinessProbe: probe,
						SecurityContext: &corev1.SecurityContext{
							RunAsNonRoot: ptr.To(true), ReadOnlyRootFilesystem: ptr.To(true), AllowPrivilegeEscalation: ptr.To(false),
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
				},
			},
		},
	}
}
