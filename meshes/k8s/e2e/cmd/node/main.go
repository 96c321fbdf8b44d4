// Command node starts and stops the one-node Kubernetes cluster the
// end-to-end tests use, for trying things by hand:
//
//	go run ./cmd/node up      # build (cached), start, print the kubeconfig
//	go run ./cmd/node --traefik up   # and Traefik (Gateway API and Ingress, class traefik)
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
	"os"
	"os/signal"
	"syscall"

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
	traefik := fs.Bool("traefik", false, "up: also install the Gateway API's CRDs and Traefik "+node.TraefikVersion+" (GatewayClass and IngressClass traefik)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: node [--dir DIR] [--proxy-mode MODE] [--traefik] up|down|build")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errors.New("say up, down or build")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch fs.Arg(0) {
	case "build":
		_, err := node.Build(ctx, node.BuildOptions{Log: os.Stderr})
		return err
	case "up":
		bins, err := node.Build(ctx, node.BuildOptions{Log: os.Stderr})
		if err != nil {
			return err
		}
		n, err := node.Start(ctx, node.Config{Dir: *dir, Bins: bins, ProxyMode: *mode, Log: os.Stderr})
		if err != nil {
			return err
		}
		if *traefik {
			if err := upTraefik(ctx, n); err != nil {
				return err
			}
		}
		fmt.Printf("export KUBECONFIG=%s\n", n.Kubeconfig)
		fmt.Printf("# kubectl: %s/kubectl   image: %s   Prometheus: %s   logs: %s/logs\n", bins.Dir, n.Image, n.PrometheusURL, n.Dir)
		fmt.Printf("# loadgen k8s run --image %s --same-node-ok --prometheus %s …\n", n.Image, n.PrometheusURL)
		return nil
	case "down":
		return node.Down(*dir, os.Stderr)
	}
	fs.Usage()
	return fmt.Errorf("unknown command %q", fs.Arg(0))
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
