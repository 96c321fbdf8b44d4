package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
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

// staleREs match the names of the namespaces loadgen and its tests make,
// each after the process that made it: a lab's default prefix lg<pid>-…,
// Available's probes lgprobe<pid>-N, and testREs'.
var staleREs = append([]*regexp.Regexp{
	regexp.MustCompile(`^lg([0-9]+)-`),
	regexp.MustCompile(`^lgprobe([0-9]+)-`),
}, testREs...)

// testREs match the namespaces a test run leaves when it is killed: a
// sweep's sidecar pods lg<pid>p<N>c and …s (the tests run sweeps
// in-process), and every test's own lgt<pid>… (TestNSPrefix).
var testREs = []*regexp.Regexp{
	regexp.MustCompile(`^lg([0-9]+)p[0-9]+[cs]$`),
	regexp.MustCompile(`^` + TestNSPrefix + `([0-9]+)[^0-9]`),
}

// TestNSPrefix begins the name of every network namespace a test makes,
// followed by the test process's pid: lgt<pid>…. CleanupStale removes
// those of test processes that are gone (a test run killed midway).
const TestNSPrefix = "lgt"

// stalePID is the pid a namespace of loadgen's is named after, or false
// for a namespace that is not loadgen's.
func stalePID(ns string) (int, bool) { return pidOf(ns, staleREs) }

// pidOf is the pid in ns by the first of res that matches it.
func pidOf(ns string, res []*regexp.Regexp) (int, bool) {
	for _, re := range res {
		if m := re.FindStringSubmatch(ns); m != nil {
			if pid, err := strconv.Atoi(m[1]); err == nil && pid > 0 {
				return pid, true
			}
		}
	}
	return 0, false
}

// CleanupStale deletes the namespaces loadgen made — labs with the
// default prefix, a sweep's sidecar pods, the tests' — whose process is
// gone (killed before Close could run), and returns their names. Those of
// running processes are left alone.
func CleanupStale() ([]string, error) { return cleanupStale(staleREs) }

// CleanupStaleTests deletes what CleanupStale does of killed test runs
// only (testREs): a test binary calls it as it starts. It leaves labs of
// the default prefix to CleanupStale, since a test of it makes one named
// after a dead process on purpose, which another package's tests, run
// meanwhile, must not take.
func CleanupStaleTests() ([]string, error) { return cleanupStale(testREs) }

func cleanupStale(res []*regexp.Regexp) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	names, err := listNS(ctx)
	if err != nil {
		return nil, err
	}
	var removed []string
	var errs []error
	for _, ns := range names {
		pid, ok := pidOf(ns, res)
		if !ok {
			continue
		}
		if _, err := os.Stat("/proc/" + strconv.Itoa(pid)); err == nil {
			continue // its process still runs
		}
		if err := deleteNS(ctx, ns); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, ns)
	}
	return removed, errors.Join(errs...)
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
	// ModeOnly: this kernel lacks what the mode needs (a device type, eBPF
	// or TUN), but namespaces, veth and the tools work.
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
	ns := fmt.Sprintf("lgprobe%d-%d", os.Getpid(), probes.Add(1))
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
