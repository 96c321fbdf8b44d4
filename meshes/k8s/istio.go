package k8s

import (
	securityv1beta1 "istio.io/api/security/v1beta1"
	istiosec "istio.io/client-go/pkg/apis/security/v1"
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// WaypointName is the waypoint Gateway of --mesh istio-waypoint.
const WaypointName = "waypoint"

// istioObjects are the Istio meshes' own objects: a STRICT
// PeerAuthentication with MTLS, and the waypoint of istio-waypoint.
func (o Options) istioObjects() []runtime.Object {
	var out []runtime.Object
	if o.MTLS {
		out = append(out, &istiosec.PeerAuthentication{
			ObjectMeta: o.Meta("loadgen-strict", o.Namespace, nil),
			Spec: securityv1beta1.PeerAuthentication{
				Mtls: &securityv1beta1.PeerAuthentication_MutualTLS{Mode: securityv1beta1.PeerAuthentication_MutualTLS_STRICT},
			},
		})
	}
	if o.Mesh == MeshIstioWaypoint {
		// What `istioctl waypoint generate --for service` writes: an L7
		// proxy for the namespace's services, reached over HBONE.
		out = append(out, &gatewayv1.Gateway{
			ObjectMeta: o.Meta(WaypointName, o.Namespace, map[string]string{"istio.io/waypoint-for": "service"}),
			Spec: gatewayv1.GatewaySpec{
				GatewayClassName: "istio-waypoint",
				Listeners: []gatewayv1.Listener{{
					Name: "mesh", Port: 15008, Protocol: "HBONE",
				}},
			},
		})
	}
	return out
}
