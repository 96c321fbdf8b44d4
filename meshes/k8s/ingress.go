package k8s

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	"loadgen/targets/tlscert"
)

// IngressHost is the Ingress rule's host and its TLS certificate's name.
const IngressHost = "httpbin.loadgen.test"

// IngressGRPCHost is, with ingress-nginx, the gRPC Ingress's host: a
// backend-protocol annotation is the Ingress's, so gRPC has one of its
// own, on its own host.
const IngressGRPCHost = "grpc.loadgen.test"

// AnnNginxBackendProtocol is ingress-nginx's annotation of the protocol
// it speaks to an Ingress's backends (GRPC: HTTP/2 cleartext).
const AnnNginxBackendProtocol = "nginx.ingress.kubernetes.io/backend-protocol"

// AnnNginxSSLRedirect is ingress-nginx's per-Ingress switch of its
// redirect of plain HTTP to HTTPS, on by default when the Ingress has TLS.
const AnnNginxSSLRedirect = "nginx.ingress.kubernetes.io/ssl-redirect"

// IngressNginxNotice is said once whenever ingress-nginx is rendered.
const IngressNginxNotice = "note: Kubernetes retired ingress-nginx in March 2026: no releases, bug fixes or security patches after it " +
	"(its Steering and Security Response Committees); these objects are for measuring a migration. " +
	"Kubernetes points its users to Gateway API: --mesh gateway --class <your implementation>"

// IngressControllerConfigMap is the ingress-nginx controller's ConfigMap
// as its Helm chart names it; its Service has the same name.
const IngressControllerConfigMap = "ingress-nginx-controller"

// ingressObjects are the Ingress, with its TLS secret, in the run's
// namespace, and with ConfigureController the controller's ConfigMap:
// worker-processes set explicitly ("auto" counts the node's cores, not the
// pod's CPU limit, ingress-nginx#2948). That ConfigMap is the controller's,
// shared by every Ingress: without the flag it is only read.
func (o Options) ingressObjects() ([]runtime.Object, error) {
	cert, key := o.TLSCert, o.TLSKey
	if len(cert) == 0 {
		c, err := tlscert.New(tlscert.RSA2048, IngressHost, IngressGRPCHost)
		if err != nil {
			return nil, fmt.Errorf("ingress TLS certificate: %w", err)
		}
		cert, key = c.CertPEM, c.KeyPEM
	}
	secret := &corev1.Secret{
		ObjectMeta: o.Meta("loadgen-tls", o.Namespace, nil),
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{corev1.TLSCertKey: cert, corev1.TLSPrivateKeyKey: key},
	}
	backend := func(port int32) networkingv1.IngressBackend {
		return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
			Name: TargetName, Port: networkingv1.ServiceBackendPort{Number: port}}}
	}
	prefix := networkingv1.PathTypePrefix
	meta := o.Meta(TargetName, o.Namespace, nil)
	if o.Mesh == MeshIngressNginx {
		// ingress-nginx answers plain HTTP with a 308 to port 443 when
		// the Ingress has TLS: the HTTP steps would measure redirects.
		meta.Annotations = map[string]string{AnnNginxSSLRedirect: "false"}
	}
	ing := &networkingv1.Ingress{
		ObjectMeta: meta,
		Spec: networkingv1.IngressSpec{
			IngressClassName: ptr.To(o.Class),
			TLS:              []networkingv1.IngressTLS{{Hosts: []string{IngressHost}, SecretName: secret.Name}},
			// The rule's host is the TLS host: ingress-nginx serves a TLS
			// host's certificate only for the rules of that host. Workers
			// send it (Host, SNI) to the controller's address.
			Rules: []networkingv1.IngressRule{{
				Host: IngressHost,
				IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
					Paths: []networkingv1.HTTPIngressPath{{Path: "/", PathType: &prefix, Backend: backend(PortHTTP)}},
				}},
			}},
		},
	}
	out := []runtime.Object{secret, ing}
	if o.routes(RouteGRPC) {
		// ingress-nginx, docs/examples/grpc: the backend-protocol
		// annotation "is the magic ingredient that sets up the appropriate
		// nginx configuration to route http/2 traffic to our service".
		grpc := ing.DeepCopy()
		grpc.Name = TargetName + "-grpc"
		grpc.Annotations = map[string]string{AnnNginxBackendProtocol: "GRPC"}
		grpc.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{IngressGRPCHost}, SecretName: secret.Name}}
		grpc.Spec.Rules[0].Host = IngressGRPCHost
		grpc.Spec.Rules[0].HTTP.Paths[0].Backend = backend(PortGRPC)
		out = append(out, grpc)
	}
	if o.ConfigureController {
		out = append(out, o.ControllerConfig())
	}
	return out, nil
}

// ControllerConfig is what ConfigureController sets in the controller's
// ConfigMap: these keys only, by server-side apply.
func (o Options) ControllerConfig() *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: IngressControllerConfigMap, Namespace: o.IngressNamespace},
		Data:       map[string]string{"worker-processes": strconv.Itoa(o.Workers), "keep-alive-requests": "10000"},
	}
}
