package run

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/cluster"
	"loadgen/meshes/k8s/cost"
)

// With --via service (the default) the workers reach an ingress or a
// gateway at its controller's Service inside the cluster, not at the
// address it publishes: with a hostname load balancer (an ELB) the
// published path crosses the cloud's load balancer, with an IP one
// kube-proxy short-circuits it, and a pending load balancer publishes
// nothing for minutes. The Service is read from what the controller
// says of itself — ingress-nginx's --publish-service, the labels
// Gateway API implementations put on a Gateway's Service (GEP-1762) —
// never guessed.

// ingressNginxDefaultClass is the controller class an ingress-nginx
// controller claims without --controller-class.
const ingressNginxDefaultClass = "k8s.io/ingress-nginx"

// nginxController is the ingress-nginx controller of the run's class:
// its pods (the cost watch) and the Service it publishes.
type nginxController struct {
	watch   cost.Watch
	service *corev1.Service // nil: none found
	note    string          // why no Service, when none
}

// controllerArgs are a container's command and args: where
// ingress-nginx's flags are.
func controllerArgs(c corev1.Container) []string { return append(slices.Clone(c.Command), c.Args...) }

// flagValue is --name=value's value among args.
func flagValue(args []string, name string) (string, bool) {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
		if a == "--"+name && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}

// ingressNginxController finds the controller of --class: the
// IngressClass's spec.controller names it, and each ingress-nginx
// controller claims the class of its --controller-class (default
// k8s.io/ingress-nginx). ingress-nginx, "Multiple Ingress controllers":
// "ensure the --controller-class= and --ingress-class are set to
// something different on each ingress controller ... Then use the same
// value in the IngressClass". Its pods are those of the namespace whose
// container runs /nginx-ingress-controller with that class; its Service
// is the one its --publish-service names, else the one selecting its
// pods with an "http" port.
func (k *Coordinator) ingressNginxController(ctx context.Context) (*nginxController, error) {
	o := k.Options
	ic, err := k.Cluster.Client.NetworkingV1().IngressClasses().Get(ctx, o.Class, metav1.GetOptions{})
	if err != nil {
		return nil, k.Cluster.Errorf("IngressClass %s: %v", o.Class, cluster.OneLine(err))
	}
	want := ic.Spec.Controller
	pods, err := k.Cluster.Client.CoreV1().Pods(o.IngressNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, k.Cluster.Errorf("pods in %s: %v", o.IngressNamespace, cluster.OneLine(err))
	}
	var mine, others []corev1.Pod
	var args []string
	for _, p := range pods.Items {
		for _, c := range p.Spec.Containers {
			a := controllerArgs(c)
			if !slices.ContainsFunc(a, func(s string) bool { return strings.HasSuffix(s, "nginx-ingress-controller") }) {
				continue
			}
			class, ok := flagValue(a, "controller-class")
			if !ok {
				class = ingressNginxDefaultClass
			}
			if class == want && p.DeletionTimestamp == nil {
				mine = append(mine, p)
				args = a
			} else {
				others = append(others, p)
			}
			break
		}
	}
	if len(mine) == 0 {
		return nil, fmt.Errorf("IngressClass %s is controller %s's, and no ingress-nginx controller in namespace %s claims it "+
			"(--controller-class): is --ingress-namespace right?", o.Class, want, o.IngressNamespace)
	}
	sel, err := podsSelector(mine, others)
	if err != nil {
		return nil, fmt.Errorf("the ingress-nginx controller of class %s in %s: %v", o.Class, o.IngressNamespace, err)
	}
	nc := &nginxController{watch: cost.Watch{Name: "ingress-nginx", Role: "proxy", Namespace: o.IngressNamespace,
		Selector: sel.String(), Containers: []string{"controller"}}}
	if ref, ok := flagValue(args, "publish-service"); ok {
		ns, name, _ := strings.Cut(ref, "/")
		svc, err := k.Cluster.Client.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil {
			nc.service = svc
			return nc, nil
		}
		nc.note = fmt.Sprintf("its --publish-service %s: %v", ref, cluster.OneLine(err))
	}
	svcs, err := k.Cluster.Client.CoreV1().Services(o.IngressNamespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, k.Cluster.Errorf("Services in %s: %v", o.IngressNamespace, cluster.OneLine(err))
	}
	for i := range svcs.Items {
		svc := &svcs.Items[i]
		if len(svc.Spec.Selector) == 0 || !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(mine[0].Labels)) {
			continue
		}
		if slices.ContainsFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool { return p.Name == "http" || p.Port == 80 }) {
			nc.service = svc
			return nc, nil
		}
	}
	if nc.note == "" {
		nc.note = fmt.Sprintf("no Service of %s selects its pods with an http port", o.IngressNamespace)
	}
	return nc, nil
}

// podSelectorSkip are the labels a workload controller adds per pod or
// revision: no selector of the workload's pods should hold them.
var podSelectorSkip = []string{"pod-template-hash", "controller-revision-hash", "pod-template-generation", "statefulset.kubernetes.io/pod-name",
	"apps.kubernetes.io/pod-index"}

// podsSelector is a label selector of the pods of mine and none of
// others: the labels mine share, less the per-revision ones.
func podsSelector(mine, others []corev1.Pod) (labels.Selector, error) {
	common := labels.Set{}
	for k, v := range mine[0].Labels {
		if !slices.Contains(podSelectorSkip, k) {
			common[k] = v
		}
	}
	for _, p := range mine[1:] {
		for k, v := range common {
			if p.Labels[k] != v {
				delete(common, k)
			}
		}
	}
	if len(common) == 0 {
		return nil, fmt.Errorf("its pods share no label")
	}
	sel := labels.SelectorFromSet(common)
	for _, p := range others {
		if sel.Matches(labels.Set(p.Labels)) {
			return nil, fmt.Errorf("its pods' labels %v select pod %s of another controller too", common, p.Name)
		}
	}
	return sel, nil
}

// serviceDNS is a Service's cluster DNS name.
func serviceDNS(svc *corev1.Service) string {
	return svc.Name + "." + svc.Namespace + ".svc.cluster.local"
}

// serviceAddresses is the mesh path's address with --via service: the
// controller's Service, found from what the controller says of itself,
// and ok false when it has none to be found (the published address is
// then waited for, and its Service taken: publishedService).
func (k *Coordinator) serviceAddresses(ctx context.Context) (k8s.Addresses, bool, error) {
	o := k.Options
	if o.IngressService != "" {
		ns, name, _ := strings.Cut(o.IngressService, "/")
		svc, err := k.Cluster.Client.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return k8s.Addresses{}, false, k.Cluster.Errorf("--ingress-service %s: %v", o.IngressService, cluster.OneLine(err))
		}
		k.say("%s: the workers load Service %s/%s, as --ingress-service names it, inside the cluster (--via service)", proxyWatchName(o), ns, name)
		return both(serviceDNS(svc)), true, nil
	}
	switch o.Mesh {
	case k8s.MeshIngressNginx:
		nc, err := k.ingressNginxController(ctx)
		if err != nil {
			return k8s.Addresses{}, false, err
		}
		if nc.service == nil {
			k.say("ingress-nginx: the controller of class %s has no Service to be found (%s): waiting for the Ingress's published address", o.Class, nc.note)
			return k8s.Addresses{}, false, nil
		}
		k.say("ingress-nginx: the workers load the controller's Service %s/%s inside the cluster (--via service)", nc.service.Namespace, nc.service.Name)
		return both(serviceDNS(nc.service)), true, nil
	case k8s.MeshGateway:
		// GEP-1762: "implementations SHOULD label the resources they
		// create with gateway.networking.k8s.io/gateway-name".
		sel := k8s.LabelGatewayName + "=" + o.GatewayObject()
		l, err := k.Cluster.Client.CoreV1().Services("").List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return k8s.Addresses{}, false, k.Cluster.Errorf("Services %s: %v", sel, cluster.OneLine(err))
		}
		var found []*corev1.Service
		for i := range l.Items {
			if l.Items[i].Namespace == o.Namespace {
				found = append([]*corev1.Service{&l.Items[i]}, found...)
			} else {
				found = append(found, &l.Items[i])
			}
		}
		if len(found) > 0 {
			k.say("gateway: the workers load Service %s/%s (labelled %s) inside the cluster (--via service)", found[0].Namespace, found[0].Name, sel)
			return both(serviceDNS(found[0])), true, nil
		}
		if name, ns, ok := documentedService(o); ok {
			if svc, err := k.Cluster.Client.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{}); err == nil {
				k.say("gateway: the workers load Service %s/%s, as class %s names it, inside the cluster (--via service)", ns, name, o.Class)
				return both(serviceDNS(svc)), true, nil
			}
		}
	}
	return k8s.Addresses{}, false, nil
}

// documentedService is the Service a class's documentation names for a
// Gateway (Istio and NGINX Gateway Fabric: <gateway>-<class>; Cilium:
// cilium-gateway-<gateway>).
func documentedService(o k8s.Options) (name, ns string, ok bool) {
	u, err := o.URL(k8s.PortHTTP)
	if err != nil {
		return "", "", false
	}
	host := strings.TrimPrefix(u, "http://")
	host, _, _ = strings.Cut(host, ":")
	name, ns, ok = serviceDNSName(host)
	return name, ns, ok
}

// publishedService turns, with --via service, a published address into
// its Service's cluster DNS name, when a Service of the cluster is at it.
func (k *Coordinator) publishedService(ctx context.Context, a k8s.Addresses) k8s.Addresses {
	out := a
	for _, p := range []*string{&out.HTTP, &out.GRPC} {
		if *p == "" {
			continue
		}
		if svc, err := k.publishingService(ctx, *p); err == nil {
			k.say("%s: the workers load Service %s/%s, which %s is, inside the cluster (--via service)", proxyWatchName(k.Options), svc.Namespace, svc.Name, *p)
			*p = serviceDNS(svc)
		} else {
			k.say("%s: the workers load the published %s: %v", proxyWatchName(k.Options), *p, err)
		}
	}
	return out
}
