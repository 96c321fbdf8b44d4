package k8s

import (
	istionet "istio.io/client-go/pkg/apis/networking/v1"
	istiosec "istio.io/client-go/pkg/apis/security/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"loadgen/meshes/k8s/appmesh"
)

// NewScheme returns a scheme that knows every kind loadgen renders or
// reads: Kubernetes' built-in kinds, Gateway API v1, Istio's networking and
// security v1, App Mesh v1beta2 (our own types) and metrics.k8s.io. A new
// scheme each call: nothing global is mutated.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme,
		gatewayv1.Install,
		istionet.AddToScheme,
		istiosec.AddToScheme,
		appmesh.AddToScheme,
		metricsv1beta1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// strictCodecs decodes YAML or JSON into typed objects and refuses unknown
// or duplicate fields, as `kubectl apply --validate=strict` does.
func strictCodecs(s *runtime.Scheme) serializer.CodecFactory {
	return serializer.NewCodecFactory(s, serializer.EnableStrict)
}
