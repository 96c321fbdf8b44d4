package k8s

import (
	"fmt"
)

// URL is the address workers load for a target port through the mesh:
// the target's Service for sidecar and ambient meshes, the ingress
// controller's Service, or the Gateway's Service as Istio and NGINX
// Gateway Fabric name it (`k8s run` reads the real address from the
// Gateway's status).
func (o Options) URL(port int) string {
	switch o.Mesh {
	case MeshIngressNginx:
		return fmt.Sprintf("http://%s.%s.svc.cluster.local", ingressControllerConfigMap, o.IngressNamespace)
	case MeshGateway:
		p := GatewayPortHTTP
		if port == PortGRPC {
			p = GatewayPortGRPC
		}
		return fmt.Sprintf("http://%s-%s.%s.svc.cluster.local:%d", GatewayName, o.Class, o.Namespace, p)
	}
	return fmt.Sprintf("http://%s.%s.svc.cluster.local:%d", TargetName, o.Namespace, port)
}
