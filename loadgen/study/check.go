package study

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"loadgen/loadgen/sweep"
	"loadgen/results/compare"
)

// Given is what a command line gave beside Options: which of the study
// command's flags it set, whether it asks for checks, and the meshes a
// cluster run knows.
type Given struct {
	// Changed tells whether the flag of that name (no dashes) was set.
	Changed func(flag string) bool
	// Checks is set when --assert or --junit is given.
	Checks bool
	// Meshes are the meshes k8s run takes by name, "none" first
	// (meshes/k8s.Meshes, which this package does not import).
	Meshes []string
}

func (g Given) changed(flag string) bool { return g.Changed != nil && g.Changed(flag) }

// CheckOptions refuses, before anything runs, options study s cannot use:
// another study's (mesh-ladder's ladder, k8s-paths' tolerance), a
// cluster's without one, and values the steps' commands would refuse.
func (s Study) CheckOptions(o Options, g Given) error {
	if err := s.checkLadder(o, g); err != nil {
		return err
	}
	if err := s.checkCluster(o, g); err != nil {
		return err
	}
	return s.checkPaths(o, g)
}

// checkLadder refuses mesh-ladder's own options for other studies, and a
// ladder or payload list sweep would refuse.
func (s Study) checkLadder(o Options, g Given) error {
	if s.Name != "mesh-ladder" {
		for _, name := range []string{"ladder", "payloads", "proxy-image", "same-node-ok", "prometheus"} {
			if g.changed(name) {
				return fmt.Errorf("--%s is mesh-ladder's (study %s has its own plan)", name, s.Name)
			}
		}
		return nil
	}
	if (o.SameNodeOK || o.Prometheus != "") && !o.OnCluster() {
		return errors.New("--same-node-ok and --prometheus are for a cluster: add --kubeconfig (or --context)")
	}
	if g.changed("ladder") {
		if _, err := sweep.ParseLadder(o.Ladder); err != nil {
			return fmt.Errorf("--ladder: %w", err)
		}
	}
	if g.changed("payloads") {
		if _, err := sweep.ParsePayloads(o.Payloads); err != nil {
			return fmt.Errorf("--payloads: %w", err)
		}
	}
	return nil
}

// checkCluster refuses cluster options a study cannot use, and meshes k8s
// run does not know.
func (s Study) checkCluster(o Options, g Given) error {
	if !o.OnCluster() {
		if len(o.Meshes) > 0 || g.changed("workers") {
			return errors.New("--meshes and --workers are for a cluster: add --kubeconfig (or --context)")
		}
		if o.CNI != "" {
			return errors.New("--cni names a cluster's datapath: add --kubeconfig (or --context); the lab builds every mode itself")
		}
		return nil
	}
	if !s.Cluster {
		return fmt.Errorf("study %s runs on this machine only: drop --kubeconfig and --context", s.Name)
	}
	if o.CNI != "" && s.Name != "cni-matrix" {
		return fmt.Errorf("--cni is cni-matrix's: study %s does not take it", s.Name)
	}
	if o.CNI != "" && !slices.Contains(CNIModes(), o.CNI) {
		return fmt.Errorf("--cni %s: name the datapath as the lab's modes, whose published rows it is read as: %s (Cilium: ebpf; Calico: ipip, vxlan or host-gw)", o.CNI, strings.Join(CNIModes(), ", "))
	}
	named := g.Meshes[min(1, len(g.Meshes)):] // without "none"
	for _, m := range o.Meshes {
		if proxy, ok := strings.CutPrefix(m, SidecarMesh+":"); ok {
			if !slices.Contains(SidecarProxies, proxy) {
				return fmt.Errorf("--meshes %s: the sidecar mesh's proxies are %s", m, strings.Join(SidecarProxies, ", "))
			}
			continue
		}
		if !slices.Contains(named, m) {
			return fmt.Errorf("--meshes %s: want some of %s, or sidecar:PROXY (each is measured beside the same pods uncaptured)", m, strings.Join(named, ", "))
		}
	}
	if len(o.ProxyImages) > 0 && !slices.ContainsFunc(o.Meshes, func(m string) bool { return strings.HasPrefix(m, SidecarMesh) }) {
		return errors.New("--proxy-image is for the sidecar mesh: add --meshes sidecar (or sidecar:PROXY)")
	}
	if o.Workers < 1 {
		return fmt.Errorf("--workers %d: want 1 or more", o.Workers)
	}
	return nil
}

// checkPaths refuses k8s-paths' options for the other studies, and what
// k8s paths cannot take.
func (s Study) checkPaths(o Options, g Given) error {
	if g.changed("repeats") && o.Repeats < 1 {
		return fmt.Errorf("--repeats %d: want 1 or more", o.Repeats)
	}
	if s.Name != "k8s-paths" {
		if s.Name == "flannel-backends" && o.OnCluster() && g.Checks {
			return errors.New("--assert and --junit do not apply to flannel-backends on a cluster: its steps are k8s paths runs, judged by the study's orderings")
		}
		if g.changed("tolerance") {
			return fmt.Errorf("--tolerance is k8s-paths' (study %s has its own plan)", s.Name)
		}
		if g.changed("image") && !o.OnCluster() {
			return errors.New("--image is for a cluster: add --kubeconfig (or --context)")
		}
		return nil
	}
	switch {
	case len(o.Meshes) > 0 || g.changed("workers"):
		return errors.New("--meshes and --workers are mesh-ladder's: k8s-paths runs one client pod per measurement, without a mesh")
	case g.Checks:
		return errors.New("--assert and --junit do not apply to k8s-paths: its check is --tolerance, against hostNetwork")
	}
	if _, err := compare.ParsePercent(o.Tolerance); err != nil {
		return fmt.Errorf("--tolerance: %w", err)
	}
	return nil
}

// ParseProxyImages reads --proxy-image PROXY=IMAGE flags into
// Options.ProxyImages.
func ParseProxyImages(flags []string) (map[string]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, f := range flags {
		proxy, img, ok := strings.Cut(f, "=")
		switch {
		case !ok || img == "":
			return nil, fmt.Errorf("--proxy-image %q: want PROXY=IMAGE, e.g. haproxy=haproxy:3.0", f)
		case !slices.Contains(SidecarProxies, proxy):
			return nil, fmt.Errorf("--proxy-image %q: the sidecar mesh's proxies are %s", f, strings.Join(SidecarProxies, ", "))
		case out[proxy] != "":
			return nil, fmt.Errorf("--proxy-image: %s given twice", proxy)
		}
		out[proxy] = img
	}
	return out, nil
}
