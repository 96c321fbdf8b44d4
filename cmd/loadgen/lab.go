package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"loadgen/loadgen/sweep"
	"loadgen/meshes/lab"
	"loadgen/results/compare"
	"loadgen/results/report"
	"loadgen/results/store"
	"loadgen/targets/listening"
)

type labFlags struct {
	builtinFlags
	cleanup    bool
	modes      string
	paths      string
	protocols  string
	size       string
	streamSize string
}

func newLabCmd() *cobra.Command {
	f := &labFlags{}
	cmd := &cobra.Command{
		Use:   "lab [--modes a,b] [--paths a,b] [-o DIR]",
		Short: "Measure the CNI paths of a Kubernetes node pair, in network namespaces, per CNI mode",
		Long: fmt.Sprintf(`Reproduce the CNI benchmark reports (Cilium/Calico/Macvlan, Flannel backends)
on one machine: for each CNI mode, two "nodes" and three "pods" are network
namespaces joined the way that CNI joins them, and netperf-style TCP_RR,
TCP_CRR and TCP_STREAM run over the report's nine paths, from the client's
namespace to a loadgen tcp target in the server's.

Modes (--modes, default all):
%s
Paths (--paths, default all), in every mode:
  loopback             pod → itself (127.0.0.1): the floor, once for all modes
  node-node            node → node over the underlay
  pod-own-node         pod → its node (hostNetwork server)
  pod-other-node       pod → the other node
  pod-pod-same-node    pod → pod on the same node
  pod-pod-other-node   pod → pod on the other node
  node-service-local   node → ClusterIP, endpoint on this node
  node-service-remote  node → ClusterIP, endpoint on the other node
  pod-service-local    pod → ClusterIP, endpoint on the same node
  pod-service-remote   pod → ClusterIP, endpoint on the other node
A path a mode has not (macvlan has no Services and no pod → own node) is
listed as not applicable, never measured some other way. A mode this kernel
cannot build (no ipip or geneve module, say) is listed as skipped with the
reason, and the others go on.

Needs root and iproute2; iptables only for the Service paths (kube-proxy's
iptables mode). Every address is in 198.18.0.0/15 (the range RFC 2544
reserves for benchmarks) inside namespaces loadgen creates and deletes, with
their devices, BPF programs, tunnel processes and iptables rules; nothing
outside them is touched. A lab killed before it could clean up leaves
namespaces named lgPID-…: the next lab, sweep or size removes them as it
starts, and loadgen cleanup (lab --cleanup) does at any time.

Results are one sweep per protocol under -o, each path named MODE.PATH
(vxlan.pod-pod-other-node); the path × mode matrix is printed at the end and
is in loadgen report DIR. Ctrl-C keeps finished steps and prints the command
that resumes the lab. Exit status %d when any step failed, %d when a check did not
hold %s.`, modeHelp(), compare.Failed, compare.Breached, exitHelpRef),
		Example: `  sudo loadgen lab
  sudo loadgen lab --modes host-gw,vxlan,ebpf --paths pod-pod-other-node,pod-service-remote \
      -d 10s -o results/cni
  sudo loadgen lab -o results/cni --resume
  loadgen report results/cni --html cni.html`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runLab(cmd, f) },
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVar(&f.modes, "modes", "", "CNI modes, comma-separated (default all: "+strings.Join(modeStrings(lab.Modes()), ",")+")")
	fl.StringVar(&f.paths, "paths", "", "paths to measure in every mode, comma-separated (default all)")
	fl.BoolVar(&f.cleanup, "cleanup", false, "loadgen cleanup: remove what killed loadgen runs left (namespaces, temporary directories), and exit")
	fl.StringVar(&f.protocols, "protocols", strings.Join(lab.DefaultProtocols, ","), "protocols, comma-separated: tcp-rr, tcp-crr, tcp-stream, udp-rr, udp-stream, or grpc-stream alone")
	fl.StringVar(&f.size, "size", lab.DefaultSize, "request and response size of tcp-rr and tcp-crr")
	fl.StringVar(&f.streamSize, "stream-size", lab.DefaultStreamSize, "write size of tcp-stream")
	f.register(fl, "lab", lab.DefaultLadder, lab.DefaultDuration, lab.DefaultWarmup)
	fl.Lookup("baseline").Usage = fmt.Sprintf("an earlier lab's results directory, e.g. results/lab-main: each protocol compares with its sweep there (exit status %d on a regression)", compare.Breached)
	fl.Lookup("junit").Usage = "write the assertions (and baseline comparison) as JUnit XML, a file per protocol: e.g. junit.xml makes junit-tcp-rr.xml …"
	cmd.AddCommand(newUDPTunnelCmd())
	return cmd
}

func modeHelp() string {
	var b strings.Builder
	for _, m := range lab.Modes() {
		fmt.Fprintf(&b, "  %-9s %s\n", m, m.Description())
	}
	return b.String()
}

func modeStrings(ms []lab.Mode) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = string(m)
	}
	return out
}

// newUDPTunnelCmd is the udp mode's tunnel process, run by the lab in each
// node's namespace: Flannel's flanneld with the udp backend, in miniature.
func newUDPTunnelCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "udp-tunnel DEV LISTEN PREFIX=PEER...",
		Short:  "The lab's user-space UDP tunnel (started by loadgen lab --modes udp)",
		Hidden: true,
		Args:   cobra.MinimumNArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := lab.ParseTunnelArgs(args)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if err := lab.RunUDPTunnel(cmd.Context(), c, func() { fmt.Fprintln(out, lab.TunnelReady) }); err != nil {
				return failf("udp tunnel: %v", err)
			}
			return nil
		},
	}
}

// labPlan is a lab run checked against the command line, before anything
// is built.
type labPlan struct {
	modes      []lab.Mode
	paths      []string // wanted path names, none for all
	protocols  []string
	size       int
	streamSize int
	ladder     sweep.Ladder
	checks     map[string]*checkFlags
}

func (f *labFlags) plan() (*labPlan, error) {
	// The baseline is an earlier lab's directory: a sweep per protocol,
	// read per protocol below.
	f.check.perSweep = true
	ladder, err := f.parse("lab")
	if err != nil {
		return nil, err
	}
	p := &labPlan{ladder: ladder, checks: map[string]*checkFlags{}}
	if p.modes, err = lab.ParseModes(f.modes); err != nil {
		return nil, fmt.Errorf("--modes: %w", err)
	}
	if p.protocols, err = lab.ParseProtocols(f.protocols); err != nil {
		return nil, err
	}
	if p.size, err = sweep.ParseMessageSize("--size", f.size); err != nil {
		return nil, err
	}
	if p.streamSize, err = sweep.ParseMessageSize("--stream-size", f.streamSize); err != nil {
		return nil, err
	}
	for _, proto := range p.protocols {
		c, err := f.check.forSweep(proto)
		if err != nil {
			return nil, err
		}
		p.checks[proto] = c
		if err := sweep.CheckOut(lab.SweepDir(f.out, proto), f.resume); err != nil {
			return nil, err
		}
	}
	if f.resume {
		if err := lab.CheckResume(f.out, p.protocols); err != nil {
			return nil, err
		}
	}
	if p.paths, err = lab.ParsePaths(f.paths); err != nil {
		return nil, err
	}
	return p, nil
}

func runLab(cmd *cobra.Command, f *labFlags) error {
	ctx := cmd.Context()
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if f.cleanup {
		return runCleanup(cmd, f.dryRun) // the old name of loadgen cleanup
	}
	if err := f.applyFile(cmd.Flags()); err != nil {
		return err
	}
	p, err := f.plan()
	if err != nil {
		return err
	}
	if f.dryRun {
		return p.printPlan(stdout, f)
	}
	cleanLeftovers(ctx, stderr)
	exe, err := os.Executable()
	if err != nil {
		return failf("lab: %v", err)
	}
	labs, skipped, err := startLabs(ctx, stderr, p, exe)
	defer func() {
		for _, l := range labs {
			l.Close()
		}
	}()
	if err != nil {
		return err
	}
	var stops []func()
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	for _, target := range lab.Targets(p.protocols) {
		st, err := startLabServers(ctx, stderr, labs, exe, target)
		stops = append(stops, st...)
		if err != nil {
			return err
		}
	}

	resume := sweep.ResumeCommand("lab", resumeFlags(cmd), f.out)
	sw, err := lab.RunSweeps(f.out, p.protocols, func(proto, dir string) error {
		spec := f.labSpec(p, proto, lab.LoadPaths(labs))
		if err := spec.Validate(); err != nil {
			return failf("lab: %v", err)
		}
		fmt.Fprintf(stdout, "\n== %s ==\n", proto)
		job := f.job(spec, dir, "")
		job.resumeCmd = resume
		job.check = p.checks[proto]
		return job.execute(ctx, stdout, stderr)
	}, exitStatus)
	if err != nil {
		return err
	}
	if err := report.CNISection(stdout, sw.Dirs); err != nil {
		return failf("%v", err)
	}
	printNotApplicable(stdout, labs, skipped)
	fmt.Fprintf(stdout, "\n%s\n", store.ResultsLine(f.out, store.ReadWith(f.out)))
	code, line := sw.Exit()
	if line != "" {
		fmt.Fprintf(stdout, "lab: %s\n", line)
	}
	return exitWith(code)
}

// startLabs builds a lab per mode, skipping (and naming) the modes this
// kernel lacks. A lab that cannot run at all (no root, no ip, no mode
// this kernel has) is an error.
func startLabs(ctx context.Context, stderr io.Writer, p *labPlan, exe string) (labs []*lab.Lab, skipped []lab.Skip, err error) {
	cfg := lab.Config{Paths: p.paths, TunnelCommand: []string{exe, "lab", "udp-tunnel"}}
	labs, err = lab.StartModes(ctx, cfg, p.modes, func(s lab.Skip) {
		fmt.Fprint(stderr, report.Wrap("lab: "+s.String(), maxWidth, "  "))
		skipped = append(skipped, s)
	})
	if err != nil {
		return labs, skipped, failf("%v", err) // already says "lab: …"
	}
	return labs, skipped, nil
}

// startLabServers starts one target (loadgen serve tcp or grpc) per server
// namespace and address of the applicable paths.
func startLabServers(ctx context.Context, stderr io.Writer, labs []*lab.Lab, exe, target string) ([]func(), error) {
	var stops []func()
	for _, s := range lab.Servers(labs) {
		_, _, stop, err := startChild(ctx, stderr, s.Lab.Command(ctx, s.NS, exe, append([]string{"serve", target, "--addr", s.Listen}, listening.ForArgs(listening.LabLifetime)...)...))
		if err != nil {
			return stops, failf("lab: %s target in %s: %v", target, s.NS, err)
		}
		stops = append(stops, stop)
	}
	return stops, nil
}

// printPlan is lab --dry-run: the steps, per protocol, that the lab would
// run, with no namespace built. (A mode's not-applicable paths — macvlan's
// Services — are left out when the lab is built.)
func (p *labPlan) printPlan(w io.Writer, f *labFlags) error {
	for _, proto := range p.protocols {
		spec := f.labSpec(p, proto, lab.PlannedPaths(p.modes, p.paths))
		fmt.Fprintf(w, "== %s: modes %s ==\n", proto, strings.Join(modeStrings(p.modes), ","))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "#\tstep\tpath\t\n")
		for _, st := range spec.Plan() {
			pp, _ := spec.PathByName(st.Path)
			fmt.Fprintf(tw, "%d\t%s\t%s\t\n", st.Index+1, st.ID(), pp.URL)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "dry run: nothing was built or sent")
	return nil
}

// labSpec is the lab's sweep of one protocol over paths (sweep.Lab): the
// built labs' (lab.LoadPaths) or, for a dry run, the planned ones
// (lab.PlannedPaths).
func (f *labFlags) labSpec(p *labPlan, proto string, paths []lab.LoadPath) *sweep.Spec {
	lps := make([]sweep.LabPath, len(paths))
	for i, lp := range paths {
		lps[i] = sweep.LabPath(lp)
	}
	return sweep.Lab(*f.spec(p.ladder, proto, lab.Payload(proto, p.size, p.streamSize)), lps)
}

// printNotApplicable lists the paths the modes have not and the modes this
// kernel could not build.
func printNotApplicable(w io.Writer, labs []*lab.Lab, skipped []lab.Skip) {
	for _, l := range labs {
		for _, p := range l.Paths() {
			if p.NotApplicable != "" {
				fmt.Fprint(w, report.Wrap(fmt.Sprintf("not applicable: %s: %s", report.ModePath(string(p.Mode), p.Name), p.NotApplicable), maxWidth, "  "))
			}
		}
	}
	for _, s := range skipped {
		fmt.Fprint(w, report.Wrap(s.String(), maxWidth, "  "))
	}
}
