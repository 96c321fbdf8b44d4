package k8s

// classes are the classes each mesh that takes --class knows: the
// GatewayClasses and IngressClasses of the implementations
// docs/kubernetes.md names (any other name is accepted as typed).
var classes = map[string][]string{
	MeshGateway:      {"nginx", "eg", "istio", "cilium", "traefik", ClassLattice},
	MeshIngress:      {"traefik", "haproxy", "contour"},
	MeshIngressNginx: {"nginx"},
}

// Classes are the classes to suggest for mesh's --class: its own, or,
// for a mesh without classes (none given), every mesh's, each once.
func Classes(mesh string) []string {
	if cs, ok := classes[mesh]; ok {
		return append([]string(nil), cs...)
	}
	var all []string
	seen := map[string]bool{}
	for _, m := range []string{MeshGateway, MeshIngress, MeshIngressNginx} {
		for _, c := range classes[m] {
			if !seen[c] {
				seen[c] = true
				all = append(all, c)
			}
		}
	}
	return all
}
