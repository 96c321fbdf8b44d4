package k8s

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The permissions loadgen's commands need on a cluster, as one table:
// `loadgen k8s rbac` prints the ClusterRole and Roles it makes, and the
// tests hold the client code to it (every call the code makes is a row,
// every row has a call).

// The commands the table covers.
const (
	ForRun     = "run"     // loadgen k8s run
	ForPaths   = "paths"   // loadgen k8s paths
	ForCleanup = "cleanup" // loadgen k8s cleanup
)

// Where a permission applies.
type Where int

// The places of a permission.
const (
	// InRunNamespace is the run's namespace. The run creates it, so no
	// Role can be bound there beforehand: the ClusterRole holds these.
	InRunNamespace Where = iota
	InIngressNamespace
	InKubeSystem
	// InEveryNamespace is a namespaced resource in whatever namespace
	// the cluster put it (ztunnel's, a gateway's Service).
	InEveryNamespace
	ClusterScoped
)

// Permission is a row of the table: verbs on resources of a group, where,
// for which commands, when the options call for it, and why (the calls).
type Permission struct {
	For       []string
	Group     string
	Resources []string // plural, or plural/subresource
	Verbs     []string
	Where     Where
	// Rendered is set when the resources are the kinds the command applies
	// (its rendering), whichever they are.
	Rendered bool
	// Named is set when the rule names the run's namespace (resourceNames).
	Named bool
	// Names are the objects the rule is limited to (resourceNames).
	Names []string
	// Dynamic is set when the code reaches it through the dynamic client (by
	// the kind's mapping), not a typed accessor.
	Dynamic bool
	When    func(o Options) bool
	Why     string
}

func ingressNginx(o Options) bool { return o.Mesh == MeshIngressNginx }
func ingressAny(o Options) bool   { return o.UsesIngress() }
func gateway(o Options) bool      { return o.Mesh == MeshGateway }
func ambient(o Options) bool      { return o.DirectTarget() }
func appMesh(o Options) bool      { return o.Mesh == MeshAppMesh }
func configures(o Options) bool   { return o.ConfigureController }

// metricsAPI reports whether a run reads its cost from metrics.k8s.io,
// nodeMetrics whether it reads each node's too, and metered whether it
// records cost at all.
func metricsAPI(o Options) bool  { return o.Metrics == "" || o.Metrics == MetricsAPI }
func nodeMetrics(o Options) bool { return metricsAPI(o) && !o.NoNodeCost }
func metered(o Options) bool     { return o.Metrics != MetricsNone }

// controlPlane reports whether a run records a control plane's cost, in its
// namespace.
func controlPlane(o Options) bool {
	cps, _ := o.ControlPlanes()
	return len(cps) > 0
}

// inCluster reports whether the mesh path's proxy runs in the cluster, in a
// namespace of the implementation's (an ingress controller, a gateway).
func inCluster(o Options) bool {
	return o.Published() && !(o.Mesh == MeshGateway && o.Class == ClassLattice)
}

// Permissions is the table.
var Permissions = []Permission{
	// Namespaces: the run's own, created and deleted by the run.
	{For: []string{ForRun, ForPaths}, Resources: []string{"namespaces"}, Verbs: []string{"create"}, Where: ClusterScoped, Dynamic: true,
		Why: "cluster.Apply creates the run's namespace (server-side apply of an object that does not exist)"},
	{For: []string{ForRun, ForPaths, ForCleanup}, Resources: []string{"namespaces"}, Verbs: []string{"get", "delete"}, Where: ClusterScoped, Named: true,
		Why: "cluster.CheckNamespace and Cleanup get it, Cleanup deletes it"},
	{For: []string{ForRun, ForPaths}, Resources: []string{"namespaces"}, Verbs: []string{"patch"}, Where: ClusterScoped, Named: true, Dynamic: true,
		Why: "cluster.Apply patches its labels (server-side apply)"},
	// What the rendering applies, and what cleanup deletes.
	{For: []string{ForRun, ForPaths, ForCleanup}, Rendered: true, Verbs: []string{"create", "patch", "list", "delete"}, Where: InRunNamespace, Dynamic: true,
		Why: "cluster.Apply (server-side apply), cluster.Cleanup (list by label, delete)"},
	// The steps' Jobs and their pods.
	{For: []string{ForRun, ForPaths}, Group: "batch", Resources: []string{"jobs"}, Verbs: []string{"create", "get", "delete"}, Where: InRunNamespace,
		Why: "a step's Job (run.runStep, paths.runJob), worker.jobConditions"},
	{For: []string{ForRun, ForPaths, ForCleanup}, Group: "batch", Resources: []string{"jobs"}, Verbs: []string{"list"}, Where: InRunNamespace, Dynamic: true,
		Why: "cluster.Cleanup lists the run's Jobs"},
	{For: []string{ForRun, ForPaths}, Resources: []string{"pods"}, Verbs: []string{"list"}, Where: InRunNamespace,
		Why: "worker.Collect, run.checkMesh, run.targetReason, cost.WatchedPods, paths.cleanup"},
	{For: []string{ForRun, ForPaths}, Resources: []string{"pods"}, Verbs: []string{"watch"}, Where: InRunNamespace,
		Why: "worker.Collect follows the workers' pods after its list"},
	{For: []string{ForRun, ForPaths, ForCleanup}, Resources: []string{"pods"}, Verbs: []string{"list", "delete"}, Where: InRunNamespace, Dynamic: true,
		Why: "cluster.Cleanup lists and deletes the Jobs' pods"},
	{For: []string{ForRun, ForPaths}, Resources: []string{"pods/log"}, Verbs: []string{"get"}, Where: InRunNamespace,
		Why: "worker.outcome reads each worker's report from its log"},
	{For: []string{ForRun, ForPaths}, Resources: []string{"events"}, Verbs: []string{"list"}, Where: InRunNamespace,
		Why: "cluster.PodEvents: why a pod did not start"},
	{For: []string{ForRun}, Group: "apps", Resources: []string{"deployments"}, Verbs: []string{"get"}, Where: InRunNamespace,
		Why: "run.waitTarget waits for the target Deployments"},
	{For: []string{ForPaths}, Resources: []string{"pods", "services"}, Verbs: []string{"get"}, Where: InRunNamespace,
		Why: "paths.serversReady reads the servers' pods and Services"},
	{For: []string{ForPaths}, Group: "discovery.k8s.io", Resources: []string{"endpointslices"}, Verbs: []string{"list"}, Where: InRunNamespace,
		Why: "paths.serversReady waits for the Services' endpoints"},
	{For: []string{ForPaths}, Resources: []string{"nodes"}, Verbs: []string{"list"}, Where: ClusterScoped,
		Why: "paths.Runner.Run lays the paths out on the schedulable nodes"},
	{For: []string{ForPaths}, Resources: []string{"configmaps"}, Verbs: []string{"get"}, Where: InKubeSystem, Names: []string{"cilium-config", "kube-proxy", "kube-proxy-config"},
		Why: "paths.KubeProxyMode: Cilium's cilium-config (its kube-proxy replacement), kubeadm's ConfigMap kube-proxy, EKS's kube-proxy-config"},
	{For: []string{ForPaths}, Resources: []string{"pods"}, Verbs: []string{"list"}, Where: InKubeSystem,
		Why: "paths.KubeProxyMode: the kube-proxy pods' --proxy-mode"},
	// The proxies' cost: metrics.k8s.io (metrics-server), unless the run
	// reads Prometheus (--prometheus) or records none (--no-metrics).
	{For: []string{ForRun}, Group: "metrics.k8s.io", Resources: []string{"pods"}, Verbs: []string{"list"}, Where: InRunNamespace, When: metricsAPI,
		Why: "cost.PodMetrics: the target's and the sidecars' CPU and memory"},
	{For: []string{ForRun}, Group: "metrics.k8s.io", Resources: []string{"nodes"}, Verbs: []string{"get"}, Where: ClusterScoped, When: nodeMetrics,
		Why: "cost.PodMetrics: the CPU and memory of each node that ran a step's pods (k8s run --no-node-cost leaves them out)"},
	{For: []string{ForRun}, Group: "metrics.k8s.io", Resources: []string{"pods"}, Verbs: []string{"list"}, Where: InEveryNamespace,
		When: func(o Options) bool { return metricsAPI(o) && (ambient(o) || inCluster(o) || controlPlane(o)) },
		Why:  "cost.PodMetrics: ztunnel's, an ingress controller's, a gateway's or the control plane's pods, in their namespace"},
	{For: []string{ForRun}, Resources: []string{"pods"}, Verbs: []string{"list"}, Where: InEveryNamespace,
		When: func(o Options) bool { return ambient(o) || inCluster(o) || (metered(o) && controlPlane(o)) },
		Why:  "run.readyZtunnel (ztunnel in any namespace), run.placement (a node agent's, a gateway's pods, with --no-metrics too: the workers are kept off their nodes), cost.WatchedPods (theirs and the control plane's)"},
	// Ingresses and gateways.
	{For: []string{ForRun}, Group: "networking.k8s.io", Resources: []string{"ingressclasses"}, Verbs: []string{"get"}, Where: ClusterScoped, When: ingressAny,
		Why: "run.ingressNginxController"},
	{For: []string{ForRun}, Group: "networking.k8s.io", Resources: []string{"ingressclasses"}, Verbs: []string{"get", "list"}, Where: ClusterScoped, When: ingressAny,
		Dynamic: true, Why: "run.checkClass: the class, else the classes the cluster has"},
	{For: []string{ForRun}, Group: "networking.k8s.io", Resources: []string{"ingresses"}, Verbs: []string{"get"}, Where: InRunNamespace, When: ingressAny, Dynamic: true,
		Why: "run.waitPublished reads the Ingress's status"},
	{For: []string{ForRun}, Group: "gateway.networking.k8s.io", Resources: []string{"gatewayclasses"}, Verbs: []string{"get", "list"}, Where: ClusterScoped, When: gateway, Dynamic: true,
		Why: "run.checkClass"},
	{For: []string{ForRun}, Group: "gateway.networking.k8s.io", Resources: []string{"gateways"}, Verbs: []string{"get"},
		Where: InRunNamespace, When: func(o Options) bool { return gateway(o) || o.Mesh == MeshIstioWaypoint }, Dynamic: true,
		Why: "run.checkGateway, run.waitPublished, run.checkWaypoint read the Gateway's status"},
	{For: []string{ForRun}, Group: "gateway.networking.k8s.io", Resources: []string{"httproutes"}, Verbs: []string{"get"}, Where: InRunNamespace,
		When: func(o Options) bool { return gateway(o) && o.routes(RouteHTTP) }, Dynamic: true, Why: "run.checkGateway reads the route's status"},
	{For: []string{ForRun}, Group: "gateway.networking.k8s.io", Resources: []string{"grpcroutes"}, Verbs: []string{"get"}, Where: InRunNamespace,
		When: func(o Options) bool { return gateway(o) && o.routes(RouteGRPC) }, Dynamic: true, Why: "run.checkGateway reads the route's status"},
	{For: []string{ForRun}, Group: "gateway.networking.k8s.io", Resources: []string{"tcproutes"}, Verbs: []string{"get"}, Where: InRunNamespace,
		When: func(o Options) bool { return gateway(o) && o.routes(RouteTCP) }, Dynamic: true, Why: "run.checkGateway reads the route's status"},
	{For: []string{ForRun}, Resources: []string{"services"}, Verbs: []string{"get", "list"}, Where: InEveryNamespace, When: inCluster,
		Why: "run.serviceAddresses, run.publishingService: the controller's Service, in its namespace"},
	{For: []string{ForRun}, Resources: []string{"pods"}, Verbs: []string{"list"}, Where: InIngressNamespace, When: ingressNginx,
		Why: "run.ingressNginxController: the pods of the controller of --class"},
	{For: []string{ForRun}, Resources: []string{"configmaps"}, Verbs: []string{"get"}, Where: InIngressNamespace, When: ingressNginx,
		Names: []string{IngressControllerConfigMap}, Why: "run.ingressWorkers reads worker-processes at each step"},
	{For: []string{ForRun}, Resources: []string{"configmaps"}, Verbs: []string{"list", "patch", "update"}, Where: InIngressNamespace, When: configures,
		Why: "cluster.ConfigureController applies its keys, cluster.RestoreControllers finds and restores them and gives them back to their owners"},
	{For: []string{ForCleanup}, Resources: []string{"configmaps"}, Verbs: []string{"list", "patch", "update"}, Where: InIngressNamespace,
		Why: "cluster.RestoreControllers: the controller's ConfigMap a killed run changed (--configure-controller)"},
	// App Mesh.
	{For: []string{ForRun}, Group: "appmesh.k8s.aws", Resources: []string{"meshes"}, Verbs: []string{"get"}, Where: ClusterScoped, When: appMesh, Dynamic: true,
		Why: "run.checkAppMesh reads MeshActive"},
	{For: []string{ForRun}, Group: "appmesh.k8s.aws", Resources: []string{"virtualnodes", "virtualrouters", "virtualservices"}, Verbs: []string{"get"},
		Where: InRunNamespace, When: appMesh, Dynamic: true, Why: "run.checkAppMesh reads their *Active conditions and the routes' ARNs"},
}

// RBACOptions say which command's permissions to print, for what.
type RBACOptions struct {
	For string // ForRun (default), ForPaths, ForCleanup
	// Options are the command's; an empty Namespace is its default:
	// DefaultPathsNamespace for ForPaths, else DefaultNamespace.
	Options Options
	// Bind, when set ("namespace/name"), adds the bindings of a
	// ServiceAccount to the roles.
	Bind string
}

// PermissionsFor are the rows of a command for the options, each with
// its resources resolved (the rendering's kinds for Rendered rows).
func PermissionsFor(cmd string, o Options) ([]Permission, error) {
	var rendered map[Where][]schema.GroupResource
	var out []Permission
	for _, p := range Permissions {
		if !slices.Contains(p.For, cmd) || (p.When != nil && !p.When(o)) {
			continue
		}
		if !p.Rendered {
			out = append(out, p)
			continue
		}
		if rendered == nil {
			var err error
			if rendered, err = renderedKinds(cmd, o); err != nil {
				return nil, err
			}
		}
		for where, grs := range rendered {
			byGroup := map[string][]string{}
			for _, gr := range grs {
				byGroup[gr.Group] = append(byGroup[gr.Group], gr.Resource)
			}
			for g, rs := range byGroup {
				q := p
				q.Rendered, q.Group, q.Resources, q.Where = false, g, rs, where
				out = append(out, q)
			}
		}
	}
	return out, nil
}

// PathsKinds are the kinds a paths run applies besides its namespace:
// set by package paths (which renders them), so that the table needs no
// import of it.
var PathsKinds = []schema.GroupVersionKind{{Version: "v1", Kind: "Pod"}, {Version: "v1", Kind: "Service"}}

// renderedKinds are the resources a command applies or cleans up,
// namespaced (in the run's namespace) and cluster-scoped, less the
// Namespace (its own rows) and the controller's ConfigMap (configures).
func renderedKinds(cmd string, o Options) (map[Where][]schema.GroupResource, error) {
	var gvks []schema.GroupVersionKind
	switch cmd {
	case ForPaths:
		gvks = PathsKinds
	default:
		// The kinds only: no Ingress certificate to make (an RSA key).
		if len(o.TLSCert) == 0 {
			o.TLSCert, o.TLSKey = []byte("unused"), []byte("unused")
		}
		r, err := Render(o, nil)
		if err != nil {
			return nil, err
		}
		for _, u := range r.WithoutClient() {
			if u.GetLabels()[LabelManagedBy] != ManagedBy {
				continue // the ingress controller's ConfigMap
			}
			gvks = append(gvks, u.GroupVersionKind())
		}
	}
	out := map[Where][]schema.GroupResource{}
	seen := map[schema.GroupResource]bool{}
	for _, gvk := range gvks {
		if gvk.Group == "" && gvk.Kind == "Namespace" {
			continue
		}
		gr := schema.GroupResource{Group: gvk.Group, Resource: Plural(gvk.Kind)}
		if seen[gr] {
			continue
		}
		seen[gr] = true
		where := InRunNamespace
		if gvk.Group == "appmesh.k8s.aws" && gvk.Kind == "Mesh" {
			where = ClusterScoped
		}
		out[where] = append(out[where], gr)
	}
	return out, nil
}

// RBAC renders a command's permissions: a ClusterRole of the
// cluster-scoped rules, the ones in every namespace and the ones in the
// run's namespace (which the run creates: no Role can be bound there
// beforehand), and a Role for each namespace that exists before the run
// (the ingress controller's, kube-system); with Bind, their bindings to
// that ServiceAccount.
func RBAC(ro RBACOptions) ([]runtime.Object, error) {
	if ro.For == "" {
		ro.For = ForRun
	}
	if !slices.Contains([]string{ForRun, ForPaths, ForCleanup}, ro.For) {
		return nil, fmt.Errorf("--for %q: want %s, %s or %s", ro.For, ForRun, ForPaths, ForCleanup)
	}
	if ro.For == ForPaths && ro.Options.Namespace == "" {
		ro.Options.Namespace = DefaultPathsNamespace
	}
	o, err := ro.Options.WithDefaults()
	if err != nil {
		return nil, err
	}
	perms, err := PermissionsFor(ro.For, o)
	if err != nil {
		return nil, err
	}
	name := "loadgen-" + ro.For
	if ro.For != ForPaths {
		name += "-" + o.Mesh
	}
	labels := map[string]string{LabelManagedBy: ManagedBy}
	var clusterRules []rbacv1.PolicyRule
	roles := map[string][]rbacv1.PolicyRule{} // by namespace
	for _, p := range perms {
		rule := rbacv1.PolicyRule{APIGroups: []string{p.Group}, Resources: slices.Clone(p.Resources), Verbs: slices.Clone(p.Verbs),
			ResourceNames: slices.Clone(p.Names)}
		if p.Named {
			rule.ResourceNames = []string{o.Namespace}
		}
		switch p.Where {
		case InIngressNamespace:
			roles[o.IngressNamespace] = append(roles[o.IngressNamespace], rule)
		case InKubeSystem:
			roles["kube-system"] = append(roles["kube-system"], rule)
		default:
			clusterRules = append(clusterRules, rule)
		}
	}
	out := []runtime.Object{&rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Rules:      mergeRules(clusterRules),
	}}
	var nss []string
	for ns := range roles {
		nss = append(nss, ns)
	}
	sort.Strings(nss)
	for _, ns := range nss {
		out = append(out, &rbacv1.Role{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
			Rules:      mergeRules(roles[ns]),
		})
	}
	if ro.Bind == "" {
		return out, nil
	}
	saNS, sa, ok := strings.Cut(ro.Bind, "/")
	if !ok || saNS == "" || sa == "" {
		return nil, fmt.Errorf("--bind %q: want NAMESPACE/SERVICEACCOUNT", ro.Bind)
	}
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: saNS}}
	out = append(out, &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects:   subject,
	})
	for _, ns := range nss {
		out = append(out, &rbacv1.RoleBinding{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
			RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
			Subjects:   subject,
		})
	}
	return out, nil
}

// mergeRules folds the rules into as few as say the same: each
// resource's verbs (of a group, on the same names) in one set, then the
// resources with the same set in one rule; sorted, the printout reads as
// a table.
func mergeRules(rules []rbacv1.PolicyRule) []rbacv1.PolicyRule {
	type res struct{ group, names, resource string }
	verbs := map[res][]string{}
	for _, r := range rules {
		for _, rs := range r.Resources {
			k := res{r.APIGroups[0], strings.Join(r.ResourceNames, ","), rs}
			for _, v := range r.Verbs {
				if !slices.Contains(verbs[k], v) {
					verbs[k] = append(verbs[k], v)
				}
			}
		}
	}
	byKey := map[string]*rbacv1.PolicyRule{}
	for k, vs := range verbs {
		sort.Strings(vs)
		key := k.group + "|" + k.names + "|" + strings.Join(vs, ",")
		m, ok := byKey[key]
		if !ok {
			m = &rbacv1.PolicyRule{APIGroups: []string{k.group}, Verbs: vs}
			if k.names != "" {
				m.ResourceNames = strings.Split(k.names, ",")
			}
			byKey[key] = m
		}
		m.Resources = append(m.Resources, k.resource)
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]rbacv1.PolicyRule, 0, len(keys))
	for _, k := range keys {
		r := *byKey[k]
		sort.Strings(r.Resources)
		out = append(out, r)
	}
	return out
}

// Allows tells whether the rows of a command for the options grant verb
// on resource (plural, or plural/subresource) of group in namespace
// ("" for cluster-scoped, or a list across every namespace), on the
// object name ("" when the call names none: a list, a create).
func Allows(cmd string, o Options, group, resource, verb, namespace, name string) bool {
	o, err := o.WithDefaults()
	if err != nil {
		return false
	}
	perms, err := PermissionsFor(cmd, o)
	if err != nil {
		return false
	}
	for _, p := range perms {
		if p.Group != group || !slices.Contains(p.Resources, resource) || !slices.Contains(p.Verbs, verb) {
			continue
		}
		names := p.Names
		if p.Named {
			names = []string{o.Namespace}
		}
		if len(names) > 0 && !slices.Contains(names, name) {
			continue
		}
		switch p.Where {
		case InRunNamespace, InEveryNamespace, ClusterScoped:
			// The ClusterRole's rules: any namespace, cluster-scoped too.
			return true
		case InIngressNamespace:
			if namespace == o.IngressNamespace {
				return true
			}
		case InKubeSystem:
			if namespace == "kube-system" {
				return true
			}
		}
	}
	return false
}

// Plural is a kind's resource name, as the API server serves it
// (Gateway: gateways, Mesh: meshes, Ingress: ingresses, Policy: policies).
func Plural(kind string) string {
	k := strings.ToLower(kind)
	switch {
	case strings.HasSuffix(k, "s"), strings.HasSuffix(k, "sh"), strings.HasSuffix(k, "ch"), strings.HasSuffix(k, "x"):
		return k + "es"
	case strings.HasSuffix(k, "y") && len(k) > 1 && !strings.ContainsRune("aeiou", rune(k[len(k)-2])):
		return k[:len(k)-1] + "ies"
	}
	return k + "s"
}
