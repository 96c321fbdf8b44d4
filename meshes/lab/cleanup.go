package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"loadgen/meshes/leftover"
)

// Cleanup deletes every namespace whose name starts with prefix: the
// leftovers of a lab whose process crashed before Close. Pass the
// Config.Prefix it used (or "lg<pid>-" for the default). An empty prefix
// is refused, since it would delete every namespace on the machine.
// Deleting a namespace deletes its devices, their BPF programs and its
// iptables rules; a udp tunnel process dies with the loadgen that started
// it.
func Cleanup(prefix string) error {
	if err := validPrefix(prefix); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	names, err := listNS(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, ns := range names {
		if strings.HasPrefix(ns, prefix) {
			if err := deleteNS(ctx, ns); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// listNS returns the names `ip netns list` knows.
func listNS(ctx context.Context) ([]string, error) {
	out, err := run(ctx, "ip", "netns", "list")
	if err != nil {
		return nil, err
	}
	var names []string
	for _, line := range strings.Split(out, "\n") {
		// Lines are "name" or "name (id: 3)".
		if f := strings.Fields(line); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	return names, nil
}

// TestNSPrefix begins the name of every network namespace a test makes,
// followed by the test process's pid: lgt<pid>…. leftover's cleanup
// removes those of test processes that are gone (a test run killed
// midway).
const TestNSPrefix = "lgt"

// CleanupStaleTests deletes the namespaces of killed test runs only
// (lgt<pid>…, see leftover): a test binary calls it as it starts. It
// leaves the other leftovers of dead processes to loadgen cleanup, since a
// test of that makes some on purpose, which another package's tests, run
// meanwhile, must not take.
func CleanupStaleTests() ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	removed, err := leftover.Clean(ctx, func(it leftover.Item) bool { return it.Kind == leftover.Namespace && it.Test })
	names := make([]string, len(removed))
	for i, it := range removed {
		names[i] = it.Name
	}
	return names, err
}

// probes counts Available's throwaway namespaces, so concurrent calls
// do not collide.
var probes atomic.Int64

// Unavailable is Available's answer when the lab cannot be built here: the
// reason, and whether the mode itself is missing from the kernel (so the
// other modes may still run) rather than the whole lab.
type Unavailable struct {
	Mode   Mode
	Reason string
	// ModeOnly is set when this kernel lacks what the mode needs (a device
	// type, eBPF or TUN), but namespaces, veth and the tools work.
	ModeOnly bool
}

func (u *Unavailable) Error() string { return u.Reason }

// Available reports why a lab of cfg cannot run here (not Linux, not root,
// no `ip`, no `iptables` when a Service path needs it, or a kernel that
// refuses a network namespace, veth, or what the mode needs) as an
// *Unavailable that says what to do; nil when it can. It creates and
// deletes a throwaway namespace to find out.
func Available(cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return &Unavailable{Mode: cfg.mode(), Reason: "lab: " + err.Error()}
	}
	if err := tools(cfg.NeedsIPTables()); err != nil {
		return &Unavailable{Mode: cfg.mode(), Reason: err.Error()}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ns := leftover.Name(fmt.Sprintf("-probe%d", probes.Add(1)))
	fail := func(err error, hint string, modeOnly bool) error {
		return &Unavailable{Mode: cfg.mode(), Reason: withHint(err, hint).Error(), ModeOnly: modeOnly}
	}
	if _, err := run(ctx, "ip", "netns", "add", ns); err != nil {
		return fail(err, "the kernel or container refuses network namespaces: run privileged (docker --privileged) with CONFIG_NET_NS", false)
	}
	defer deleteNS(ctx, ns)

	type probe struct {
		args     []string
		hint     string
		modeOnly bool
	}
	probes := []probe{
		{[]string{"-n", ns, "link", "set", "lo", "up"}, "cannot configure a network namespace", false},
		{[]string{"-n", ns, "link", "add", "name", "pa", "type", "veth", "peer", "name", "pb"}, "enable veth: modprobe veth", false},
		{[]string{"netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"}, "sysctl cannot write inside a network namespace: run privileged", false},
	}
	m := cfg.mode()
	switch m.family() {
	case bridged:
		probes = append(probes, probe{[]string{"-n", ns, "link", "add", "name", "pbr", "type", "bridge"}, "enable bridges: modprobe bridge", true})
	case macvlanned:
		probes = append(probes, probe{[]string{"-n", ns, "link", "add", "link", "pa", "name", "pmv", "type", "macvlan", "mode", "bridge"}, "enable macvlan: modprobe macvlan (CONFIG_MACVLAN)", true})
	}
	switch m {
	case VXLAN:
		probes = append(probes, probe{[]string{"-n", ns, "link", "add", "name", "pvx", "type", "vxlan", "id", "1", "dstport", "4789", "local", node1IP, "dev", "pa"}, "this kernel has no VXLAN: modprobe vxlan (CONFIG_VXLAN)", true})
	case Geneve:
		probes = append(probes, probe{[]string{"-n", ns, "link", "add", "name", "pgn", "type", "geneve", "id", "1", "remote", node2IP}, "this kernel has no Geneve: modprobe geneve (CONFIG_GENEVE)", true})
	case IPIP:
		probes = append(probes, probe{[]string{"-n", ns, "link", "add", "name", "pip", "type", "ipip", "local", node1IP, "remote", node2IP}, "this kernel has no IP-in-IP: modprobe ipip (CONFIG_NET_IPIP)", true})
	case UDP:
		probes = append(probes, probe{[]string{"-n", ns, "tuntap", "add", "dev", "ptun", "mode", "tun"}, "this kernel or container has no TUN: modprobe tun, or give the container /dev/net/tun", true})
	}
	if cfg.NeedsIPTables() {
		probes = append(probes, probe{[]string{"netns", "exec", ns, "iptables", "-w", "-t", "nat", "-L", "PREROUTING", "-n"}, "enable the iptables nat table: modprobe iptable_nat (or nft_chain_nat for iptables-nft)", false})
	}
	for _, p := range probes {
		if _, err := run(ctx, "ip", p.args...); err != nil {
			return fail(err, p.hint, p.modeOnly)
		}
	}
	if m == EBPF {
		if err := bpfAvailable(ns, "pa"); err != nil {
			return &Unavailable{Mode: m, Reason: "lab: ebpf: " + err.Error(), ModeOnly: true}
		}
	}
	return nil
}

// tools checks the operating system, privileges and commands the lab
// needs, without touching the kernel; iptables only when asked.
func tools(iptables bool) error {
	if runtime.GOOS != "linux" {
		return errors.New("lab: network namespaces need Linux; run on a Linux host or VM")
	}
	if os.Geteuid() != 0 {
		return errors.New("lab: creating network namespaces needs root: run as root (e.g. sudo -E go test ./meshes/lab)")
	}
	need := []struct{ name, pkg string }{{"ip", "iproute2"}, {"sysctl", "procps"}}
	if iptables {
		need = append(need, struct{ name, pkg string }{"iptables", "iptables"})
	}
	for _, tool := range need {
		if _, err := exec.LookPath(tool.name); err != nil {
			why := ""
			if tool.name == "iptables" {
				why = " (the Service paths need it; leave them out with --paths to run without)"
			}
			return fmt.Errorf("lab: %s not found on PATH: install it (apt-get install %s)%s", tool.name, tool.pkg, why)
		}
	}
	return nil
}

// stopProcess ends a process the lab started: SIGTERM, then SIGKILL after
// five seconds.
func stopProcess(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		<-done
	}
}
