package k8s

import "strconv"

// URL is the address workers load for a target port through the mesh:
// the target's Service for sidecar and ambient meshes, the ingress
// controller's Service, or the Gateway's Service as Istio and NGINX
// Gateway Fabric name it (`k8s run` reads the real address from the
// Gateway's or the Ingress's status).
func (o Options) URL(port int) string {
	u, _ := o.resolve("http://"+TargetHost+":"+strconv.Itoa(port), "") // cannot fail: a valid URL
	return u
}
