package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"loadgen/loadgen/sweep"
	"loadgen/meshes/lab"
	"loadgen/results/report"
	"loadgen/results/store"
)

type labFlags struct {
	builtinFlags
	cleanup    bool
	paths      string
	protocols  string
	size       string
	streamSize string
}

var labProtocols = []string{"tcp-rr", "tcp-crr", "tcp-stream"}

func newLabCmd() *cobra.Command {
	f := &labFlags{}
	cmd := &cobra.Command{
		Use:   "lab [--paths a,b] [-o DIR]",
		Short: "Measure the CNI paths of a Kubernetes node pair, built in network namespaces",
		Long: `Reproduce the CNI benchmark reports (Cilium/Calico/Macvlan, Flannel backends)
on one machine: two "nodes" and their "pods" are network namespaces joined
as a CNI would join them, and netperf-style TCP_RR, TCP_CRR and TCP_STREAM
run over each path, from the client pod's namespace to a loadgen tcp target
in the server's:

  loopback            pod → itself (127.0.0.1): the floor
  node-node           node → node over the underlay
  pod-own-node        pod → its node, over its veth
  pod-pod-same-node   pod → pod through the node's bridge
  pod-pod-host-gw     pod → pod on the other node, routed (Flannel host-gw, Calico BGP)
  pod-pod-vxlan       pod → pod on the other node, VXLAN overlay (Flannel vxlan)
  pod-pod-macvlan     macvlan pod → macvlan pod on the underlay
  pod-service         pod → a ClusterIP, kube-proxy-style iptables DNAT to a pod on the other node

Needs root, iproute2 and iptables. Every address is in 198.18.0.0/15 (the
range RFC 2544 reserves for benchmarks) inside namespaces loadgen creates and
deletes; nothing outside them is touched. A lab killed before it could clean
up leaves namespaces named lgPID-…: loadgen lab --cleanup deletes them.
Results are one sweep per protocol under -o; the CNI path matrix is printed
at the end and is in loadgen report DIR.`,
		Example: `  loadgen lab
  loadgen lab --paths loopback,pod-pod-host-gw,pod-pod-vxlan -d 10s --repeats 3 -o results/cni
  loadgen report results/cni --html cni.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runLab(cmd, f) },
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVar(&f.paths, "paths", "", "paths to measure, comma-separated (default all)")
	fl.BoolVar(&f.cleanup, "cleanup", false, "only delete the namespaces of labs whose loadgen was killed, and exit")
	fl.StringVar(&f.protocols, "protocols", strings.Join(labProtocols, ","), "protocols, comma-separated")
	fl.StringVar(&f.size, "size", "1KiB", "request and response size of tcp-rr and tcp-crr")
	fl.StringVar(&f.streamSize, "stream-size", "64KiB", "write size of tcp-stream")
	f.register(fl, "lab", "c1t1", 3*time.Second, 500*time.Millisecond) // netperf runs one connection
	fl.Lookup("baseline").Usage = "an earlier lab's results directory: each protocol compares with its sweep there (exit status 1 on a regression)"
	fl.Lookup("junit").Usage = "write the assertions (and baseline comparison) as JUnit XML, a file per protocol: FILE-tcp-rr.xml …"
	return cmd
}

func runLab(cmd *cobra.Command, f *labFlags) error {
	ctx := cmd.Context()
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if f.cleanup {
		removed, err := lab.CleanupStale()
		fmt.Fprintf(stdout, "removed %d namespaces of killed labs %s\n", len(removed), strings.Join(removed, " "))
		if err != nil {
			return failf("lab --cleanup: %v", err)
		}
		return nil
	}
	// The baseline is an earlier lab's directory: a sweep per protocol,
	// read per protocol below.
	f.check.perSweep = true
	ladder, err := f.parse("lab")
	if err != nil {
		return err
	}
	checks := map[string]*checkFlags{}
	protocols := splitList(f.protocols)
	for _, p := range protocols {
		if !slices.Contains(labProtocols, p) {
			return fmt.Errorf("--protocols: %q is not one of %s", p, strings.Join(labProtocols, ", "))
		}
	}
	if len(protocols) == 0 {
		return errors.New("--protocols is empty: give one or more of " + strings.Join(labProtocols, ", "))
	}
	size, err := sweep.ParseSize(f.size)
	if err != nil {
		return fmt.Errorf("--size: %w", err)
	}
	streamSize, err := sweep.ParseSize(f.streamSize)
	if err != nil {
		return fmt.Errorf("--stream-size: %w", err)
	}
	if size < 1 || streamSize < 1 {
		return errors.New("--size and --stream-size must be at least 1 byte")
	}
	for _, proto := range protocols {
		c, err := f.check.forSweep(proto)
		if err != nil {
			return err
		}
		checks[proto] = c
		if dir := filepath.Join(f.out, proto); stepsExist(dir) && !f.resume {
			return fmt.Errorf("%s already holds a sweep: add --resume to continue it, or choose another -o", dir)
		}
	}
	wanted := splitList(f.paths)
	for _, name := range wanted {
		if !slices.Contains(lab.PathNames(), name) {
			return fmt.Errorf("--paths: no path %q: the lab has %s", name, strings.Join(lab.PathNames(), ", "))
		}
	}
	if err := lab.Available(); err != nil {
		return failf("lab: %v", err)
	}
	l, err := lab.Start(ctx, lab.Config{})
	if err != nil {
		return failf("lab: %v", err)
	}
	defer l.Close()
	paths := l.Paths()
	if f.paths != "" {
		var chosen []lab.Path
		for _, name := range wanted {
			i := slices.IndexFunc(paths, func(p lab.Path) bool { return p.Name == name })
			chosen = append(chosen, paths[i])
		}
		paths = chosen
	}

	// One tcp target per server namespace and address.
	exe, err := os.Executable()
	if err != nil {
		return failf("lab: %v", err)
	}
	servers := map[string]bool{}
	for _, p := range paths {
		key := p.ServerNS + " " + p.ListenAddr
		if servers[key] {
			continue
		}
		servers[key] = true
		addr := net.JoinHostPort(p.ListenAddr, strconv.Itoa(lab.ServicePort))
		_, _, stop, err := startChild(ctx, stderr, l.Command(ctx, p.ServerNS, exe, "serve", "tcp", "--addr", addr, "--for", "1h"))
		if err != nil {
			return failf("lab: tcp target in %s: %v", p.ServerNS, err)
		}
		defer stop()
	}

	var dirs []string
	checkFailed := false
	for _, proto := range protocols {
		spec := f.spec(ladder, proto, size)
		if proto == "tcp-stream" {
			spec.Payloads = sweep.Payloads{streamSize}
		}
		for _, p := range paths {
			spec.Paths = append(spec.Paths, sweep.Path{
				Name: p.Name, URL: net.JoinHostPort(p.DialAddr, strconv.Itoa(lab.ServicePort)),
				Baseline: p.Baseline, NetNS: p.ClientNS,
			})
		}
		if err := spec.Validate(); err != nil {
			return failf("lab: %v", err)
		}
		dir := filepath.Join(f.out, proto)
		fmt.Fprintf(stdout, "\n== %s ==\n", proto)
		job := f.job(spec, dir, "loadgen lab "+flagArgs(cmd, "paths", "protocols", "ladder", "size", "stream-size", "duration", "warmup", "repeats"))
		job.check = checks[proto]
		if err := job.execute(ctx, stdout, stderr); err != nil {
			// A failed check (an assertion, a regression) fails the lab
			// run, after the other protocols ran.
			var ee exitError
			if !errors.As(err, &ee) || ee.code != exitFail {
				return err
			}
			checkFailed = true
		}
		dirs = append(dirs, dir)
	}
	var sweeps []*report.Sweep
	for _, dir := range dirs {
		s, err := readSweep(dir)
		if err != nil {
			return failf("%v", err)
		}
		sweeps = append(sweeps, s)
	}
	fmt.Fprintf(stdout, "\nCNI path matrix (network namespaces on one machine; latency is the mean at %s)\n", ladder[0])
	if err := report.CNITable(stdout, sweeps); err != nil {
		return failf("%v", err)
	}
	fmt.Fprintf(stdout, "\nresults: %s (loadgen report %s)\n", f.out, f.out)
	if checkFailed {
		return exitError{code: exitFail}
	}
	return nil
}

// stepsExist tells whether dir already holds a sweep.
func stepsExist(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, store.ManifestFile))
	return err == nil
}

func splitList(s string) []string {
	var out []string
	for _, part := range strings.Split(s, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// flagArgs repeats the flags given on the command line among names, for a
// resume hint.
func flagArgs(cmd *cobra.Command, names ...string) string {
	var b strings.Builder
	for _, n := range names {
		if fl := cmd.Flags().Lookup(n); fl != nil && fl.Changed {
			fmt.Fprintf(&b, "--%s %s ", n, fl.Value)
		}
	}
	return b.String()
}
