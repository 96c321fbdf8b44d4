package report

import (
	"fmt"
	"strings"

	"loadgen/results"
)

// placementLines say where each step of a cluster run ran (its
// Placement), a line per step: the Kubernetes version, the nodes of each
// role's pods, the proxies' images and the workers' requests. None for
// steps that did not run on a cluster.
func placementLines(cells []*Cell) []string {
	var out []string
	for _, c := range cells {
		for _, st := range c.Steps {
			if p := st.Cluster; p != nil {
				out = append(out, st.ID+": "+placementLine(p))
			}
		}
	}
	return out
}

// placementLine is one step's placement: "Kubernetes v1.35.0 · target on
// n1 · 2 workers on n2, n3 · waypoint on n5 · images istio-proxy
// docker.io/istio/proxyv2:1.26.0 (2 threads, requests cpu=1,memory=512Mi,
// limits cpu=2) · worker requests cpu=100m,memory=64Mi".
func placementLine(p *results.Placement) string {
	var parts []string
	if p.Kubernetes != "" {
		parts = append(parts, "Kubernetes "+p.Kubernetes)
	}
	var roles []string
	nodes := map[string][]string{}
	count := map[string]int{}
	var images []string
	for _, pod := range p.Pods {
		if count[pod.Role] == 0 {
			roles = append(roles, pod.Role)
		}
		count[pod.Role]++
		if !contains(nodes[pod.Role], pod.Node) {
			nodes[pod.Role] = append(nodes[pod.Role], pod.Node)
		}
		for _, im := range pod.Proxies {
			if s := im.Container + " " + im.Image + proxyTerms(im); !contains(images, s) {
				images = append(images, s)
			}
		}
	}
	for _, r := range roles {
		who := r
		if n := count[r]; n > 1 {
			who = fmt.Sprintf("%d %ss", n, r)
		}
		parts = append(parts, who+" on "+orText(strings.Join(nodes[r], ", "), "no node"))
	}
	if len(images) > 0 {
		parts = append(parts, "images "+strings.Join(images, ", "))
	}
	if p.WorkerRequests != "" {
		parts = append(parts, "worker requests "+p.WorkerRequests)
	}
	if p.WorkerLimits != "" {
		parts = append(parts, "limits "+p.WorkerLimits)
	}
	return strings.Join(parts, " · ")
}

// proxyTerms are the terms a proxy container ran on, as its spec said
// them: " (2 threads, requests cpu=1,memory=512Mi, limits cpu=2)", or ""
// when it said none.
func proxyTerms(im results.ContainerImage) string {
	var t []string
	if im.Threads > 0 {
		t = append(t, fmt.Sprintf("%d threads", im.Threads))
	}
	if im.Requests != "" {
		t = append(t, "requests "+im.Requests)
	}
	if im.Limits != "" {
		t = append(t, "limits "+im.Limits)
	}
	if len(t) == 0 {
		return ""
	}
	return " (" + strings.Join(t, ", ") + ")"
}
