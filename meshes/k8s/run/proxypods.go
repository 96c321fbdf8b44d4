package run

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
	"loadgen/meshes/k8s/cost"
)

// The proxy behind an ingress or a gateway is found from the address the
// cluster published for it, never from a name guessed per
// implementation: that address is a Service's (its cluster DNS name, its
// cluster IP, an external IP, or its load balancer's IP or hostname), and
// the Service's selector names the proxy's pods. Traefik, Envoy Gateway,
// NGINX Gateway Fabric, Istio's gateways and ingress-nginx all publish
// such a Service; VPC Lattice publishes the domain of a service outside
// the cluster, which has no pods to watch.

// proxyWatchName is the name a published proxy's cost goes by in reports
// and assertions (cpu.ingress, mem.gateway), whatever the class: the same
// assertion then holds across implementations.
func proxyWatchName(o k8s.Options) string {
	if o.Mesh == k8s.MeshGateway {
		return "gateway"
	}
	return "ingress"
}

// proxyWatches are the watches of the proxy serving the published
// addresses, and a note when it has none in the cluster or cannot be
// found (the steps then record no proxy cost, and say why).
func (k *Coordinator) proxyWatches(ctx context.Context, addr k8s.Addresses) ([]cost.Watch, string) {
	o := k.Options
	if o.Mesh == k8s.MeshIngressNginx {
		// The controller of --class, not every ingress-nginx controller
		// of its namespace.
		nc, err := k.ingressNginxController(ctx)
		if err != nil {
			return nil, fmt.Sprintf("ingress-nginx: the steps record no proxy cost: %v", err)
		}
		k.say("ingress-nginx: the controller of class %s is pods %s in %s", o.Class, nc.watch.Selector, nc.watch.Namespace)
		return []cost.Watch{nc.watch}, ""
	}
	if o.Mesh != k8s.MeshIngress && o.Mesh != k8s.MeshGateway {
		return nil, ""
	}
	if o.Mesh == k8s.MeshGateway && o.Class == k8s.ClassLattice {
		return nil, fmt.Sprintf("class %s: the proxy is VPC Lattice, outside the cluster: the steps record no proxy cost", o.Class)
	}
	if o.Mesh == k8s.MeshGateway && o.Class == ClassCilium {
		return k.ciliumEnvoyWatches(ctx)
	}
	var out []cost.Watch
	var misses []string
	seen := map[string]bool{}
	for _, a := range []string{addr.HTTP, addr.GRPC} {
		if a == "" || seen[a] {
			continue
		}
		seen[a] = true
		svc, err := k.publishingService(ctx, a)
		if err != nil {
			misses = append(misses, err.Error())
			continue
		}
		w := cost.Watch{Name: proxyWatchName(o), Role: "proxy", Namespace: svc.Namespace,
			Selector: labels.SelectorFromSet(svc.Spec.Selector).String()}
		if !slices.ContainsFunc(out, func(o cost.Watch) bool { return o.Namespace == w.Namespace && o.Selector == w.Selector }) {
			out = append(out, w)
			k.say("%s: the proxy behind %s is Service %s/%s's pods (%s)", w.Name, a, svc.Namespace, svc.Name, w.Selector)
		}
	}
	if len(out) == 0 && o.Mesh == k8s.MeshGateway {
		// Implementations that make a proxy per Gateway label its pods
		// with the Gateway's name (GEP-1762).
		sel := "gateway.networking.k8s.io/gateway-name=" + o.GatewayObject()
		if l, err := k.Cluster.Client.CoreV1().Pods(o.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel}); err == nil && len(l.Items) > 0 {
			return []cost.Watch{{Name: proxyWatchName(o), Role: "proxy", Namespace: o.Namespace, Selector: sel}}, ""
		}
	}
	if len(out) > 1 {
		return out[:1], fmt.Sprintf("%s: the routes' addresses are served by different Services; the steps record %s/%s's pods only",
			proxyWatchName(o), out[0].Namespace, out[0].Selector)
	}
	if len(out) == 0 {
		return nil, fmt.Sprintf("%s: the steps record no proxy cost: %s", proxyWatchName(o), strings.Join(misses, "; "))
	}
	return out, ""
}

// findProxies finds the proxies serving the published addresses: their
// watches (for a run that records cost), and their pods' nodes, which the
// workers keep off and the steps' placement records (every run).
func (k *Coordinator) findProxies(ctx context.Context, addr k8s.Addresses) {
	var note string
	if k.proxies, note = k.proxyWatches(ctx, addr); note != "" {
		k.say("%s", note)
	}
	if k.Watcher == nil {
		return // no cost: no control plane counted in a proxy's figure
	}
	// A controller in its proxy's pods (NGINX Gateway Fabric before 2.0
	// ran nginx beside it in one pod) is counted once, by the proxy's
	// watch of the whole pod.
	cps, _ := k.Options.ControlPlanes()
	k.inProxy = map[string]bool{}
	for _, cp := range cps {
		for _, p := range k.pods(ctx, cp.Namespace, cp.Selector, nil) {
			if w, ok := proxyOf(k.proxies, &p); ok {
				k.inProxy[cp.Name] = true
				k.say("control plane %s: its pod %s/%s is the %s proxy's too: counted once, in the %s figure", cp.Name, p.Namespace, p.Name, w.Name, w.Name)
				break
			}
		}
	}
}

// proxyOf is the proxy watch, of whole pods, that selects the pod.
func proxyOf(proxies []cost.Watch, p *corev1.Pod) (cost.Watch, bool) {
	for _, w := range proxies {
		sel, err := labels.Parse(w.Selector)
		if err == nil && w.Namespace == p.Namespace && len(w.Containers) == 0 && sel.Matches(labels.Set(p.Labels)) {
			return w, true
		}
	}
	return cost.Watch{}, false
}

// publishingService is the Service an address is: by its cluster DNS
// name (name.namespace.svc…), or the one whose cluster IP, external IP or
// load balancer address it is.
func (k *Coordinator) publishingService(ctx context.Context, addr string) (*corev1.Service, error) {
	svcs := k.Cluster.Client.CoreV1().Services("")
	if name, ns, ok := serviceDNSName(addr); ok {
		svc, err := k.Cluster.Client.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return nil, fmt.Errorf("address %s names Service %s/%s: %v", addr, ns, name, cluster.OneLine(err))
		}
		return withSelector(svc, addr)
	}
	l, err := svcs.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing Services to find the one at %s: %v", addr, cluster.OneLine(err))
	}
	for i := range l.Items {
		if serviceAt(&l.Items[i], addr) {
			return withSelector(&l.Items[i], addr)
		}
	}
	return nil, fmt.Errorf("no Service of the cluster is at %s (its cluster IP, external IPs or load balancer address)", addr)
}

func withSelector(svc *corev1.Service, addr string) (*corev1.Service, error) {
	if len(svc.Spec.Selector) == 0 {
		return nil, fmt.Errorf("the Service %s/%s at %s has no selector: its pods cannot be named", svc.Namespace, svc.Name, addr)
	}
	return svc, nil
}

// serviceDNSName parses a Service's cluster DNS name:
// name.namespace.svc[.cluster-domain].
func serviceDNSName(addr string) (name, ns string, ok bool) {
	if net.ParseIP(addr) != nil {
		return "", "", false
	}
	parts := strings.Split(strings.TrimSuffix(addr, "."), ".")
	if len(parts) < 3 || parts[2] != "svc" {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// serviceAt tells whether the Service is reached at addr.
func serviceAt(svc *corev1.Service, addr string) bool {
	if slices.Contains(svc.Spec.ClusterIPs, addr) || svc.Spec.ClusterIP == addr || slices.Contains(svc.Spec.ExternalIPs, addr) {
		return true
	}
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if in.IP == addr || (in.Hostname != "" && strings.EqualFold(in.Hostname, addr)) {
			return true
		}
	}
	return false
}

// ClassCilium is Cilium's GatewayClass.
const ClassCilium = k8s.ClassCilium

// CiliumEnvoySelector is the label of the cilium-envoy DaemonSet's pods
// (Cilium's chart).
const CiliumEnvoySelector = "k8s-app=cilium-envoy"

// ciliumEnvoyWatches are a Cilium gateway's proxy: no pods of its own (its
// Service has no selector), but the per-node Envoy of the nodes its
// traffic crosses — Cilium's docs: the Envoy proxy "becomes responsible
// for proxying all matching L7 requests on that node", run "as
// independently life-cycled DaemonSet called cilium-envoy" — watched on
// the run's nodes, as ztunnel is. Without that DaemonSet, Envoy runs
// inside the cilium agent, whose CPU is the datapath's too: no figure.
func (k *Coordinator) ciliumEnvoyWatches(ctx context.Context) ([]cost.Watch, string) {
	o := k.Options
	l, err := k.Cluster.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: CiliumEnvoySelector})
	if err != nil {
		return nil, fmt.Sprintf("gateway: the steps record no proxy cost: cilium-envoy pods: %v", cluster.OneLine(err))
	}
	if len(l.Items) == 0 {
		return nil, fmt.Sprintf("class %s: no cilium-envoy pods (%s): Envoy runs inside the cilium agent, whose CPU is the datapath's too; "+
			"the steps record no gateway cost (install Cilium with envoy.enabled=true for one)", o.Class, CiliumEnvoySelector)
	}
	w := cost.Watch{Name: proxyWatchName(o), Role: "proxy", Namespace: l.Items[0].Namespace, Selector: CiliumEnvoySelector,
		NodesOf: &cost.PodSet{Namespace: o.Namespace, Selector: k8s.Selector(o.RunID)}}
	k.say("gateway: class %s's proxy is the cilium-envoy pods (%s/%s) on the run's nodes", o.Class, w.Namespace, w.Selector)
	return []cost.Watch{w}, ""
}
