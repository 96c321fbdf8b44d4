package node

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	apiregv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	aggregator "k8s.io/kube-aggregator/pkg/client/clientset_generated/clientset"
	"k8s.io/utils/ptr"
)

// managedBy marks the EndpointSlices the node writes itself (the
// EndpointSlice controller leaves them alone).
const managedBy = "loadgen-node"

// bootstrap creates what a cluster's installer would: the kube-dns
// Service (CoreDNS runs on the host, behind it, reached through
// kube-proxy as a DNS pod would be), and metrics-server's Service and
// APIService (metrics.k8s.io, aggregated by the API server).
func (n *Node) bootstrap(ctx context.Context) error {
	dnsPorts := []corev1.ServicePort{
		{Name: "dns", Port: 53, Protocol: corev1.ProtocolUDP, TargetPort: intstr.FromInt32(53)},
		{Name: "dns-tcp", Port: 53, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(53)},
	}
	if err := n.hostService(ctx, "kube-dns", n.Addr.DNSServiceIP, dnsPorts, map[string]string{"k8s-app": "kube-dns"}); err != nil {
		return err
	}
	msPorts := []corev1.ServicePort{{Name: "https", Port: 443, Protocol: corev1.ProtocolTCP, TargetPort: intstr.FromInt32(PortMetricsServer)}}
	if err := n.hostService(ctx, "metrics-server", "", msPorts, map[string]string{"k8s-app": "metrics-server"}); err != nil {
		return err
	}
	ac, err := aggregator.NewForConfig(n.RESTConfig)
	if err != nil {
		return err
	}
	svc := &apiregv1.APIService{
		ObjectMeta: metav1.ObjectMeta{Name: "v1beta1.metrics.k8s.io", Labels: map[string]string{"k8s-app": "metrics-server"}},
		Spec: apiregv1.APIServiceSpec{
			Service:               &apiregv1.ServiceReference{Namespace: "kube-system", Name: "metrics-server", Port: ptr.To[int32](443)},
			Group:                 "metrics.k8s.io",
			Version:               "v1beta1",
			InsecureSkipTLSVerify: true, // metrics-server's certificate is its own, self-signed
			GroupPriorityMinimum:  100,
			VersionPriority:       100,
		},
	}
	if _, err := ac.ApiregistrationV1().APIServices().Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("APIService %s: %w", svc.Name, err)
	}
	if n.CNI == CNIFlannel {
		return n.flannelRBAC(ctx)
	}
	return nil
}

// hostService is a Service in kube-system whose one endpoint is the node's
// address: a component that runs on the host, not in a pod.
func (n *Node) hostService(ctx context.Context, name, clusterIP string, ports []corev1.ServicePort, labels map[string]string) error {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "kube-system", Labels: labels},
		Spec:       corev1.ServiceSpec{ClusterIP: clusterIP, Ports: ports},
	}
	if _, err := n.Client.CoreV1().Services("kube-system").Create(ctx, svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create the Service kube-system/%s: %w", name, err)
	}
	var eps []discoveryv1.EndpointPort
	for _, p := range ports {
		eps = append(eps, discoveryv1.EndpointPort{Name: ptr.To(p.Name), Port: ptr.To(p.TargetPort.IntVal), Protocol: ptr.To(p.Protocol)})
	}
	l := map[string]string{discoveryv1.LabelServiceName: name, discoveryv1.LabelManagedBy: managedBy}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: name + "-host", Namespace: "kube-system", Labels: l},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{n.Addr.NodeIP},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports: eps,
	}
	if !n.Multi() {
		// The one node runs the component; several nodes' control plane
		// is on no node.
		slice.Endpoints[0].NodeName = ptr.To(NodeName)
	}
	if _, err := n.Client.DiscoveryV1().EndpointSlices("kube-system").Create(ctx, slice, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("EndpointSlice kube-system/%s: %w", slice.Name, err)
	}
	return nil
}

// nodeReady is a check: the kubelet registered the node and it is Ready.
func (n *Node) nodeReady(name string) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		nd, err := n.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		for _, c := range nd.Status.Conditions {
			if c.Type == corev1.NodeReady {
				if c.Status == corev1.ConditionTrue {
					return nil
				}
				return fmt.Errorf("node %s not Ready: %s: %s", name, c.Reason, c.Message)
			}
		}
		return fmt.Errorf("node %s has no Ready condition yet", name)
	}
}

// waitServiceAccount waits for the controller manager to create a
// namespace's default service account: pods cannot be created before.
func (n *Node) waitServiceAccount(ctx context.Context, ns string) error {
	p := n.proc("kube-controller-manager")
	if p == nil {
		return errors.New("kube-controller-manager is not running")
	}
	return p.waitFor(ctx, 30*time.Second, func(ctx context.Context) error {
		_, err := n.Client.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
		return err
	})
}
