package node

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Down takes down the node whose state is in dir, whether this process
// started it or another one did (and crashed): pods first, through the
// container runtime, so that the CNI plugins release their addresses and
// network namespaces; then every process; then what is left on the host.
// It returns an error naming whatever could not be put back. With no
// state in dir, it takes down what the one node may have left on the
// host (its cgroups, chains, bridge) as well as what is in dir.
func Down(dir string, log io.Writer) error { return down(dir, log, false) }

// down is Down; several tells that dir is (to be) several nodes', which
// with no state in it leaves the host's chains, the one node's cgroups
// and bridge alone: those are the one node's, which may be up beside.
func down(dir string, log io.Writer, several bool) error {
	st, err := loadState(dir)
	if errors.Is(err, os.ErrNotExist) {
		st = nil
	} else if err != nil {
		return err
	}
	say := func(format string, a ...any) {
		if log != nil {
			fmt.Fprintf(log, "node down: "+format+"\n", a...)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var errs []error
	roots := []string{CgroupRoot}
	if st == nil && several {
		roots = nil
	}
	if st != nil {
		members := st.members()
		roots = st.cgroupRoots()
		say("stopping %d components of %s", len(st.Procs), dir)
		// The kubelets first: they would start what is removed below again.
		for i := range st.Procs {
			if isKubelet(st.Procs[i].Name) {
				st.Procs[i].stop(10 * time.Second)
			}
		}
		for _, m := range members {
			if err := removePods(ctx, dir, m); err != nil {
				errs = append(errs, err)
			}
		}
		for i := len(st.Procs) - 1; i >= 0; i-- {
			st.Procs[i].stop(10 * time.Second)
		}
	}
	// Whatever still runs: containerd's shims (they name its socket), and
	// the containers in the kubelets' cgroups.
	killMatching(dir)
	killCgroups(roots)
	// Several nodes' kube-proxies ran in their namespaces, which go below
	// with every rule in them: the host's chains are not theirs (a one-node
	// cluster may be up beside them).
	multi := st.multi() || st == nil && several
	if st != nil && st.Bins != "" && !multi {
		if err := cleanupKubeProxy(ctx, st.Bins, Member{}); err != nil {
			errs = append(errs, err)
		}
	}
	if !multi {
		if err := removeChains(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if st != nil {
		// Several nodes' namespaces, and everything in them.
		if err := removeUnderlay(ctx, st); err != nil {
			errs = append(errs, err)
		}
	}
	if err := unmountUnder(dir); err != nil {
		errs = append(errs, err)
	}
	if st != nil && st.cni() == CNICilium {
		// The agents' mount point (startCilium made it): empty when theirs.
		if err := os.Remove(ciliumRunDir); err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTEMPTY) {
			errs = append(errs, err)
		}
	}
	if err := removeCgroups(roots); err != nil {
		errs = append(errs, err)
	}
	addr := DefaultAddresses
	if st != nil {
		addr = st.Addr
	}
	if !multi && linkExists(addr.Bridge) {
		if _, err := run(ctx, "ip", "link", "del", addr.Bridge); err != nil {
			errs = append(errs, err)
		}
	}
	if st != nil && st.AddedAddr && addressOnLo(addr.NodeIP) {
		if _, err := run(ctx, "ip", "addr", "del", addr.NodeIP+"/32", "dev", "lo"); err != nil {
			errs = append(errs, err)
		}
	}
	if st != nil && !(multi && OneNodeUp()) {
		for k, v := range st.Sysctls {
			if now, ok := readSysctl(k); ok && now != v {
				if err := os.WriteFile(sysctlPath(k), []byte(v), 0o644); err != nil {
					errs = append(errs, fmt.Errorf("sysctl %s back to %s: %w", k, v, err))
				}
			}
		}
	}
	// The kubelets' links in /var/log/containers (a path no setting
	// moves) to the logs of their pods, for those in dir: several nodes
	// keep their pods' logs there.
	for _, l := range containerLogLinks(dir) {
		if err := os.Remove(l); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	// The node's files, but its logs (for whoever wants to read why).
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			if e.Name() == "logs" {
				continue
			}
			if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if left := leftovers(dir, st, several); len(left) > 0 {
		errs = append(errs, fmt.Errorf("left on the machine: %s", strings.Join(left, "; ")))
	}
	if st != nil && len(errs) == 0 {
		say("nothing left of %s", dir)
	}
	return errors.Join(errs...)
}

// multi tells whether the state is of several nodes (in network
// namespaces of their own: Flannel, Macvlan, Cilium).
func (s *state) multi() bool { return s != nil && slices.Contains(MultiCNIs, s.cni()) }

// isKubelet tells a kubelet's process by its name in the state file.
func isKubelet(name string) bool { return name == "kubelet" || strings.HasPrefix(name, "kubelet-") }

// cgroupRoots are the kubelets' cgroup roots.
func (s *state) cgroupRoots() []string {
	var out []string
	for _, m := range s.members() {
		out = append(out, m.CgroupRoot)
	}
	return out
}

// removePods stops and removes every pod sandbox of a node through the
// CRI, as the kubelet does when a pod goes: its containers die and the
// CNI plugins release its address, veth and network namespace. A
// containerd that is no longer running (a crashed node) is started again
// for it, in the node's network namespace (where its pods' CNI
// configuration acts); a node whose namespace is gone has no pods left to
// release.
func removePods(ctx context.Context, dir string, m Member) error {
	p := memberPaths(dir, m)
	if _, err := os.Stat(p.containerdConf); err != nil {
		return nil
	}
	if m.Netns != "" && !netnsExists(m.Netns) {
		return nil
	}
	sock := p.containerdSock
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	rc := runtimeapi.NewRuntimeServiceClient(conn)
	var list *runtimeapi.ListPodSandboxResponse
	listPods := func(ctx context.Context) (err error) {
		if list, err = rc.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{}); err != nil {
			return fmt.Errorf("CRI ListPodSandbox: %w", err)
		}
		return nil
	}
	if _, err := run(ctx, "ctr", "--address", sock, "version"); err != nil {
		bin, args := m.inNetns("containerd", "--config", p.containerdConf, "--log-level", "warn")
		tmp, err := startProc(dir, procName("containerd-down", m), bin, args, noPulls)
		if err != nil {
			return err
		}
		defer tmp.stop(10 * time.Second)
		// containerd answers before its CRI plugin has loaded its pods
		// ("server is not initialized yet"): wait for the list itself.
		if err := tmp.waitFor(ctx, 30*time.Second, listPods); err != nil {
			return err
		}
	} else if err := listPods(ctx); err != nil {
		return err
	}
	var errs []error
	for _, s := range list.Items {
		// A pod the kubelet removed since the list (a Job's, deleted as
		// its run ended) is gone already: what this loop is for.
		if _, err := rc.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: s.Id}); status.Code(err) == codes.NotFound {
			continue
		} else if err != nil {
			errs = append(errs, fmt.Errorf("stop pod %s/%s: %w", s.Metadata.GetNamespace(), s.Metadata.GetName(), err))
			continue
		}
		if _, err := rc.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: s.Id}); err != nil && status.Code(err) != codes.NotFound {
			errs = append(errs, fmt.Errorf("remove pod %s/%s: %w", s.Metadata.GetNamespace(), s.Metadata.GetName(), err))
		}
	}
	return errors.Join(errs...)
}

// cleanupKubeProxy removes kube-proxy's rules of every mode
// (`kube-proxy --cleanup`, as its documentation says to switch modes), in
// a node's network namespace.
func cleanupKubeProxy(ctx context.Context, bins string, m Member) error {
	bin := filepath.Join(bins, "kube-proxy")
	if _, err := os.Stat(bin); err != nil {
		return nil
	}
	_, err := m.run(ctx, bin, "--cleanup", "--v=0")
	return err
}

func linkExists(name string) bool {
	_, err := os.Stat(filepath.Join("/sys/class/net", name))
	return err == nil
}

func addressOnLo(ip string) bool {
	out, err := run(context.Background(), "ip", "-4", "-o", "addr", "show", "dev", "lo")
	return err == nil && strings.Contains(out, " "+ip+"/")
}

// Leftovers lists what of a node is still on the machine: processes
// naming its directory or in its cgroups, mounts, cgroups, the bridge,
// the address, iptables chains and nft tables, changed sysctls; and of
// several nodes, their network namespaces (and any process still in one),
// the underlay and the guards. Empty after a clean Down.
func Leftovers(dir string, st *state) []string { return leftovers(dir, st, false) }

// leftovers is Leftovers; several, with no state, looks at dir's alone
// (as down does).
func leftovers(dir string, st *state, several bool) []string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out []string
	for _, pid := range matching(dir) {
		out = append(out, fmt.Sprintf("process %d (%s)", pid, cmdline(pid)))
	}
	roots := []string{CgroupRoot}
	if st != nil {
		roots = st.cgroupRoots()
	} else if several {
		roots = nil
	}
	for _, pid := range cgroupPids(roots) {
		out = append(out, fmt.Sprintf("process %d in the node's cgroups (%s)", pid, cmdline(pid)))
	}
	addr := DefaultAddresses
	if st != nil {
		addr = st.Addr
	}
	for _, m := range mounts(dir) {
		out = append(out, "mount "+m)
	}
	for _, d := range cgroupDirs(roots) {
		out = append(out, "cgroup "+d)
	}
	for _, l := range containerLogLinks(dir) {
		out = append(out, "link "+l)
	}
	multi := st.multi() || st == nil && several
	if !multi && linkExists(addr.Bridge) {
		out = append(out, "bridge "+addr.Bridge)
	}
	if st != nil && st.AddedAddr && addressOnLo(addr.NodeIP) {
		out = append(out, "address "+addr.NodeIP+" on lo")
	}
	if !multi {
		out = append(out, chains(ctx)...)
	}
	if st != nil {
		out = append(out, underlayLeftovers(ctx, st)...)
	}
	if st != nil && !(multi && OneNodeUp()) {
		for k, v := range st.Sysctls {
			if now, ok := readSysctl(k); ok && now != v {
				out = append(out, fmt.Sprintf("sysctl %s = %s (was %s)", k, now, v))
			}
		}
	}
	return out
}

// containerLogsDir is where every kubelet links its containers' logs.
const containerLogsDir = "/var/log/containers"

// containerLogLinks are the links in containerLogsDir to logs under dir.
func containerLogLinks(dir string) []string {
	ents, err := os.ReadDir(containerLogsDir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		p := filepath.Join(containerLogsDir, e.Name())
		if t, err := os.Readlink(p); err == nil && strings.HasPrefix(t, dir+"/") {
			out = append(out, p)
		}
	}
	return out
}

func cmdline(pid int) string {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
}
