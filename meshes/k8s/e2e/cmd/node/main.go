// Command node starts and stops the one-node Kubernetes cluster the
// end-to-end tests use, for trying things by hand:
//
//	go run ./cmd/node up      # build (cached), start, print the kubeconfig
//	go run ./cmd/node --traefik up   # and Traefik (Gateway API and Ingress, class traefik)
//	go run ./cmd/node --sidecars up  # and the sidecar mesh's proxy images (nginx, HAProxy, Caddy)
//	go run ./cmd/node --nodes 2 --backend vxlan up   # two nodes in network namespaces, Flannel
//	go run ./cmd/node --nodes 2 --cni macvlan up     # two nodes, each pod a macvlan child of its node's uplink
//	go run ./cmd/node --nodes 2 --cni cilium [--kube-proxy-replacement] up   # two nodes, Cilium's agents (VXLAN)
//	go run ./cmd/node --dir /var/tmp/loadgen-node2 backend host-gw   # switch a running cluster's Flannel backend
//	go run ./cmd/node --nodes 2 study -o DIR [-d 10s] [--repeats 3] [--lab] [--k8s-paths DIR2]
//	    # loadgen study flannel-backends on two nodes, each backend in turn (and
//	    # the lab's, and loadgen study k8s-paths on vxlan); the nodes taken down after
//	go run ./cmd/node cni-study -o DIR [-d 3s] [--repeats 1] [--lab]
//	    # loadgen study cni-matrix on two nodes with Macvlan, then Flannel vxlan
//	    # and host-gw (and the lab's first), each network taken down after
//	go run ./cmd/node down    # take it down, leaving nothing on the machine
//	go run ./cmd/node build   # only build the components
//
// `make cluster-up` and `make cluster-down` run these.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"loadgen/loadgen/study"
	"loadgen/meshes/k8s/e2e/node"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "node:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("node", flag.ContinueOnError)
	dir := fs.String("dir", node.DefaultDir, "the node's state directory")
	mode := fs.String("proxy-mode", node.ProxyIPTables, "kube-proxy's mode: iptables or nftables")
	sidecars := fs.Bool("sidecars", false, "up: also build and import the sidecar mesh's proxy images (k8s run --mesh sidecar --proxy-image)")
	traefik := fs.Bool("traefik", false, "up: also install the Gateway API's CRDs and Traefik "+node.TraefikVersion+" (GatewayClass and IngressClass traefik)")
	nodes := fs.Int("nodes", 1, "up: how many nodes: 1 on the host with the bridge plugin, 2 or more each in a network namespace with Flannel")
	backend := fs.String("backend", "", "up with --nodes 2 or more and --cni flannel: Flannel's backend: "+strings.Join(node.FlannelBackends, ", ")+" (default "+node.FlannelVXLAN+")")
	cni := fs.String("cni", node.CNIFlannel, "up with --nodes 2 or more: the pods' network: "+strings.Join(node.MultiCNIs, " or ")+" (macvlan: each pod a macvlan child of its node's uplink; cilium: Cilium "+node.CiliumVersion+"'s agents, VXLAN)")
	kpr := fs.Bool("kube-proxy-replacement", false, "up with --cni cilium: Cilium's kube-proxy replacement (socket LB), no kube-proxy")
	out := fs.String("o", "", "study: the study's results directory (loadgen study flannel-backends -o)")
	dur := fs.Duration("d", 0, "study: each measurement's duration (default the study's own)")
	repeats := fs.Int("repeats", 0, "study: the samples of each (default the study's own)")
	lab := fs.Bool("lab", false, "study: run the lab's flannel-backends into -o first, for its figures beside the cluster's")
	k8sPaths := fs.String("k8s-paths", "", "study: also loadgen study k8s-paths on the two nodes (vxlan) into this directory")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: node [--dir DIR] [--proxy-mode MODE] [--traefik] [--sidecars] [--nodes N [--cni flannel|macvlan|cilium] [--backend B] [--kube-proxy-replacement]] up|down|build\n"+
			"       node [--dir DIR] backend B\n       node --nodes 2 [--dir DIR] study -o DIR [-d D] [--repeats N] [--lab] [--k8s-paths DIR2]\n       node [--dir DIR] cni-study -o DIR [-d D] [--repeats N] [--lab]")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if sub := fs.Arg(0); sub == "study" || sub == "cni-study" {
		// Its flags after the command, too.
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return err
		}
		if fs.NArg() > 0 {
			fs.Usage()
			return fmt.Errorf("study: unexpected %q", fs.Args())
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		sf := studyFlags{dir: *dir, nodes: *nodes, mode: *mode, out: *out, d: *dur, repeats: *repeats, lab: *lab, k8sPaths: *k8sPaths}
		if sub == "cni-study" {
			return cniStudy(ctx, sf)
		}
		return flannelStudy(ctx, sf)
	}
	if fs.Arg(0) == "backend" && fs.NArg() == 2 {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		n, err := node.Attach(ctx, *dir, os.Stderr)
		if err != nil {
			return err
		}
		return n.SetBackend(ctx, fs.Arg(1))
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("say up, down or build")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch fs.Arg(0) {
	case "build":
		if err := checkNetwork(*nodes, *cni, *kpr); err != nil {
			return err
		}
		_, err := node.Build(ctx, node.BuildOptions{Log: os.Stderr})
		if err == nil && *nodes > 1 && *cni == node.CNICilium {
			_, err = node.BuildCilium(ctx, node.BuildOptions{Log: os.Stderr, Nice: true})
		} else if err == nil && *nodes > 1 {
			_, err = node.BuildFlannel(ctx, node.BuildOptions{Log: os.Stderr})
		}
		return err
	case "up":
		if err := checkNetwork(*nodes, *cni, *kpr); err != nil {
			return err
		}
		bins, err := node.Build(ctx, node.BuildOptions{Log: os.Stderr})
		if err != nil {
			return err
		}
		cfg := node.Config{Dir: *dir, Bins: bins, ProxyMode: *mode, Log: os.Stderr}
		if *nodes > 1 {
			cfg.Nodes, cfg.Backend, cfg.CNI, cfg.KubeProxyReplacement = *nodes, *backend, *cni, *kpr
			switch *cni {
			case node.CNIFlannel:
				if cfg.Flanneld, err = node.BuildFlannel(ctx, node.BuildOptions{Log: os.Stderr}); err != nil {
					return err
				}
			case node.CNICilium:
				if cfg.Cilium, err = node.BuildCilium(ctx, node.BuildOptions{Log: os.Stderr, Nice: true}); err != nil {
					return err
				}
			}
		}
		n, err := node.Start(ctx, cfg)
		if err != nil {
			return err
		}
		if *traefik {
			if err := upTraefik(ctx, n); err != nil {
				return err
			}
		}
		var images map[string]string
		if *sidecars {
			if images, err = n.SidecarImages(ctx); err != nil {
				return err
			}
		}
		fmt.Printf("export KUBECONFIG=%s\n", n.Kubeconfig)
		fmt.Printf("# kubectl: %s/kubectl   image: %s   Prometheus: %s   logs: %s/logs\n", bins.Dir, n.Image, n.PrometheusURL, n.Dir)
		fmt.Printf("# loadgen k8s run --image %s --same-node-ok --prometheus %s …\n", n.Image, n.PrometheusURL)
		if len(images) > 0 {
			fmt.Print(meshLadderLines(n.Kubeconfig, n.Image, n.PrometheusURL, images, runtime.NumCPU()))
		}
		return nil
	case "down":
		return node.Down(*dir, os.Stderr)
	}
	fs.Usage()
	return fmt.Errorf("unknown command %q", fs.Arg(0))
}

// StudyStep is each step's duration in the study the node prints: what
// the node's Prometheus (cAdvisor's series, scraped every 2 s) measured
// each side's proxy over on 2026-12-06.
const StudyStep = 15 * time.Second

// checkNetwork refuses, before any build, what Start would: a network
// the nodes do not run, the kube-proxy replacement without Cilium.
func checkNetwork(nodes int, cni string, kpr bool) error {
	if nodes > 1 && !slices.Contains(node.MultiCNIs, cni) {
		return fmt.Errorf("--cni %s: want %s", cni, strings.Join(node.MultiCNIs, ", "))
	}
	if kpr && (nodes < 2 || cni != node.CNICilium) {
		return errors.New("--kube-proxy-replacement is Cilium's: it needs --nodes 2 or more and --cni cilium")
	}
	return nil
}

// meshLadderLines are the study the node prints for its sidecar images:
// loadgen study mesh-ladder through each proxy on both sides, with the
// node's Prometheus, over the ladder its CPUs allow (and a line saying
// what that leaves out and why), 100 B and 1 KiB.
func meshLadderLines(kubeconfig, image, prometheus string, images map[string]string, cpus int) string {
	var proxies string
	for _, p := range slices.Sorted(maps.Keys(images)) {
		proxies += fmt.Sprintf(" --proxy-image %s=%s", p, images[p])
	}
	ladder, capped := study.MachineLadder(cpus)
	s := fmt.Sprintf("# loadgen study mesh-ladder --kubeconfig %s --image %s --same-node-ok --prometheus %s --meshes sidecar%s --ladder %s --payloads 100,1KiB -d %s -o mesh-ladder-node\n",
		kubeconfig, image, prometheus, proxies, ladder, StudyStep)
	if capped != "" {
		s += "# " + capped + "\n"
	}
	return s
}

// upTraefik installs the Gateway API's CRDs and Traefik on the node.
func upTraefik(ctx context.Context, n *node.Node) error {
	bin, err := node.BuildTraefik(ctx, node.BuildOptions{Log: os.Stderr})
	if err != nil {
		return err
	}
	files, err := node.GatewayAPICRDs(".")
	if err != nil {
		return err
	}
	if _, err := node.InstallCRDs(ctx, n.RESTConfig, files); err != nil {
		return err
	}
	tr, err := n.InstallTraefik(ctx, bin)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "node: Traefik %s at %s (GatewayClass and IngressClass %s)\n", node.TraefikVersion, tr.ClusterIP, node.TraefikClass)
	fmt.Printf("# loadgen k8s run --mesh gateway --class %s …   loadgen k8s run --mesh ingress --class %s …\n", node.TraefikClass, node.TraefikClass)
	return nil
}

type studyFlags struct {
	dir, mode, out, k8sPaths string
	nodes, repeats           int
	d                        time.Duration
	lab                      bool
}

// loadgen runs the node's loadgen (the working tree's, static) with
// args, its output the command's, and returns its exit status.
func (f studyFlags) loadgen(ctx context.Context, bins *node.Bins) func(args ...string) int {
	return func(args ...string) int {
		fmt.Fprintf(os.Stderr, "node study: loadgen %s\n", strings.Join(args, " "))
		cmd := exec.CommandContext(ctx, bins.Loadgen, args...)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				return ee.ExitCode()
			}
			fmt.Fprintf(os.Stderr, "node study: %v\n", err)
			return -1
		}
		return 0
	}
}

// common are a study run's flags: its duration and repeats, -o, and
// --resume once the directory exists.
func (f studyFlags) common() []string {
	var a []string
	if f.d > 0 {
		a = append(a, "-d", f.d.String())
	}
	if f.repeats > 0 {
		a = append(a, "--repeats", strconv.Itoa(f.repeats))
	}
	if _, err := os.Stat(f.out); err == nil {
		a = append(a, "--resume")
	}
	return append(a, "-o", f.out, "-q")
}

// cniStudy runs `loadgen study cni-matrix` on two nodes of this machine,
// each of their CNIs in turn: the lab's first (--lab), then the nodes up
// with Macvlan, with Flannel's vxlan and host-gw backends, and with
// Cilium (VXLAN, kube-proxy), the study on each with its datapath named
// (--cni; Cilium's is the study's ebpf, whose published row is Cilium
// with VXLAN) and --resume, the last printing the whole table. Then
// Cilium with its kube-proxy replacement: the published tables have no
// row for it (their paths cross no Service), so its run is `loadgen k8s
// paths` with the study's flags into k8s-cilium-kpr, beside the study's
// runs, its table its own. The nodes are taken down after each network,
// whatever happened.
func cniStudy(ctx context.Context, f studyFlags) error {
	if f.out == "" {
		return errors.New("cni-study: say where its results go (-o DIR)")
	}
	bins, err := node.Build(ctx, node.BuildOptions{Log: os.Stderr})
	if err != nil {
		return err
	}
	flanneld, err := node.BuildFlannel(ctx, node.BuildOptions{Log: os.Stderr})
	if err != nil {
		return err
	}
	cilium, err := node.BuildCilium(ctx, node.BuildOptions{Log: os.Stderr, Nice: true})
	if err != nil {
		return err
	}
	loadgen := f.loadgen(ctx, bins)
	if f.lab {
		if code := loadgen(append([]string{"study", "cni-matrix"}, f.common()...)...); code != 0 {
			return fmt.Errorf("the lab's study: exit %d", code)
		}
	}
	code := 0
	for _, cfg := range []node.Config{
		{CNI: node.CNIMacvlan},
		{CNI: node.CNIFlannel, Backend: node.FlannelVXLAN, Flanneld: flanneld},
		{CNI: node.CNICilium, Cilium: cilium},
		{CNI: node.CNICilium, Cilium: cilium, KubeProxyReplacement: true},
	} {
		cfg.Dir, cfg.Bins, cfg.ProxyMode, cfg.Nodes, cfg.Log = f.dir, bins, f.mode, max(f.nodes, 2), os.Stderr
		n, err := node.Start(ctx, cfg)
		if err != nil {
			return err
		}
		modes := []string{node.CNIMacvlan}
		switch {
		case cfg.CNI == node.CNIFlannel:
			modes = []string{node.FlannelVXLAN, node.FlannelHostGW}
		case cfg.KubeProxyReplacement:
			modes = nil
		case cfg.CNI == node.CNICilium:
			modes = []string{"ebpf"}
		}
		for _, mode := range modes {
			if cfg.CNI == node.CNIFlannel {
				if err = n.SetBackend(ctx, mode); err != nil {
					break
				}
			}
			code = loadgen(append([]string{"study", "cni-matrix", "--kubeconfig", n.Kubeconfig, "--image", n.Image, "--cni", mode}, f.common()...)...)
			if ctx.Err() != nil {
				err = ctx.Err()
				break
			}
		}
		if cfg.KubeProxyReplacement {
			code = loadgen(kprPaths(f, n)...)
			err = ctx.Err()
		}
		if derr := n.Stop(); derr != nil || err != nil {
			return errors.Join(err, derr)
		}
	}
	if code != 0 {
		return fmt.Errorf("the study's last run: exit %d", code)
	}
	return nil
}

// kprPaths is `loadgen k8s paths` on Cilium's kube-proxy replacement with
// the cni-matrix study's tests, duration, repeats and tolerance, into the
// study's directory's k8s-cilium-kpr.
func kprPaths(f studyFlags, n *node.Node) []string {
	a := []string{"k8s", "paths", "--kubeconfig", n.Kubeconfig, "--image", n.Image, "-n", "loadgen-cni",
		"--tests", "tcp-stream,tcp-rr,tcp-crr,http", "--tolerance", "99%", "-o", filepath.Join(f.out, "k8s-cilium-kpr")}
	if f.d > 0 {
		a = append(a, "-d", f.d.String())
	}
	return append(a, "--repeats", strconv.Itoa(max(f.repeats, 1)))
}

// flannelStudy runs `loadgen study flannel-backends` on two nodes of
// this machine: the lab's first (--lab, before the nodes start), then the
// nodes up with each Flannel backend in turn and the study on them with
// --resume, each run measuring the backend the nodes run (its other
// steps refuse, as they would on any cluster running one backend), the
// last printing the whole table. The loadgen that runs it is the node's
// image's (the working tree's, static). The nodes are taken down after,
// whatever happened.
func flannelStudy(ctx context.Context, f studyFlags) (err error) {
	if f.out == "" {
		return errors.New("study: say where its results go (-o DIR)")
	}
	if f.nodes < 2 {
		f.nodes = 2
	}
	bins, err := node.Build(ctx, node.BuildOptions{Log: os.Stderr})
	if err != nil {
		return err
	}
	flanneld, err := node.BuildFlannel(ctx, node.BuildOptions{Log: os.Stderr})
	if err != nil {
		return err
	}
	loadgen, common := f.loadgen(ctx, bins), f.common
	if f.lab {
		if code := loadgen(append([]string{"study", "flannel-backends"}, common()...)...); code != 0 {
			return fmt.Errorf("the lab's study: exit %d", code)
		}
	}
	n, err := node.Start(ctx, node.Config{Dir: f.dir, Bins: bins, ProxyMode: f.mode, Nodes: f.nodes, Backend: node.FlannelBackends[0], Flanneld: flanneld, Log: os.Stderr})
	if err != nil {
		return err
	}
	defer func() {
		if derr := n.Stop(); derr != nil {
			err = errors.Join(err, derr)
		}
	}()
	code := 0
	for _, b := range node.FlannelBackends {
		if !node.FlannelHasBackend(flanneld, b) {
			fmt.Fprintf(os.Stderr, "node study: flanneld was built without the %s backend (no C compiler): its row is not measured\n", b)
			continue
		}
		if err := n.SetBackend(ctx, b); err != nil {
			return err
		}
		code = loadgen(append([]string{"study", "flannel-backends", "--kubeconfig", n.Kubeconfig, "--image", n.Image}, common()...)...)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if f.k8sPaths != "" {
		if err := n.SetBackend(ctx, node.FlannelVXLAN); err != nil {
			return err
		}
		args := []string{"study", "k8s-paths", "--kubeconfig", n.Kubeconfig, "--image", n.Image, "-o", f.k8sPaths, "-q"}
		if f.d > 0 {
			args = append(args, "-d", f.d.String())
		}
		if f.repeats > 0 {
			args = append(args, "--repeats", strconv.Itoa(f.repeats))
		}
		loadgen(args...)
	}
	if code != 0 {
		return fmt.Errorf("the study's last run: exit %d", code)
	}
	return nil
}
