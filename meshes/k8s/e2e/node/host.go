package node

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// insecureClient talks to the components' own endpoints, whose
// certificates are self-signed.
var insecureClient = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
	TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true}}

// Packages is what the node needs from Debian, for the error that says so.
const Packages = "containerd runc containernetworking-plugins conntrack iptables nftables prometheus iproute2"

// Preflight says what this machine lacks for a node, in one error naming
// the packages to install.
func Preflight() error {
	var missing []string
	if os.Geteuid() != 0 {
		return errors.New("a node needs root (it runs containerd, the kubelet and kube-proxy)")
	}
	for _, c := range []string{"containerd", "runc", "ctr", "iptables", "iptables-save", "ip6tables", "nft", "conntrack", "prometheus", "ip", "nsenter"} {
		if _, err := exec.LookPath(c); err != nil {
			missing = append(missing, c)
		}
	}
	for _, p := range []string{"bridge", "host-local", "loopback", "portmap"} {
		if _, err := os.Stat(filepath.Join(CNIBinDir, p)); err != nil {
			missing = append(missing, "CNI plugin "+p)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("a node needs %s: apt-get install %s", strings.Join(missing, ", "), Packages)
	}
	if _, err := os.Stat("/sys/fs/cgroup/cpuacct"); err != nil {
		if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err != nil {
			return errors.New("no cgroup hierarchy at /sys/fs/cgroup")
		}
	}
	return nil
}

// The sysctls the components change (the kubelet's kernel tunables,
// kube-proxy's and the bridge plugin's forwarding), saved at start and
// put back by Down.
var sysctls = []string{
	"vm.overcommit_memory", "vm.panic_on_oom", "kernel.panic", "kernel.panic_on_oops",
	"kernel.keys.root_maxkeys", "kernel.keys.root_maxbytes",
	"net.ipv4.ip_forward", "net.ipv4.conf.all.route_localnet",
	"net.bridge.bridge-nf-call-iptables", "net.bridge.bridge-nf-call-ip6tables",
	"net.netfilter.nf_conntrack_max", "net.netfilter.nf_conntrack_tcp_timeout_established",
	"net.netfilter.nf_conntrack_tcp_timeout_close_wait",
}

// hostWide tells a sysctl that is the machine's, not a network
// namespace's: the kubelets' kernel tunables and conntrack's table size.
// Several nodes change only these of the host's (their forwarding and
// bridge netfilter are their namespaces' own).
func hostWide(name string) bool {
	return strings.HasPrefix(name, "vm.") || strings.HasPrefix(name, "kernel.") || name == "net.netfilter.nf_conntrack_max"
}

// OneNodeUp tells whether the one node runs on the machine (its kubelet's
// cgroup root exists): the host-wide sysctls are then its to put back,
// not those of several nodes beside it, which may have saved them before
// it set them.
func OneNodeUp() bool {
	for _, c := range cgroupControllers() {
		if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", c, CgroupRoot)); err == nil {
			return true
		}
	}
	return false
}

func sysctlPath(name string) string {
	return filepath.Join("/proc/sys", strings.ReplaceAll(name, ".", "/"))
}

func readSysctl(name string) (string, bool) {
	b, err := os.ReadFile(sysctlPath(name))
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}

// cgroupControllers are the cgroup v1 hierarchies the kubelet uses.
func cgroupControllers() []string {
	var out []string
	ents, err := os.ReadDir("/sys/fs/cgroup")
	if err != nil {
		return nil
	}
	for _, e := range ents {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join("/sys/fs/cgroup", e.Name(), "cgroup.procs")); err == nil {
				out = append(out, e.Name())
			}
		}
	}
	return out
}

// prepareHost saves the sysctls, adds the node's address to lo, turns on
// forwarding and bridge netfilter (kube-proxy's Services between pods on
// one bridge), and makes the kubelet's cgroup root in every controller.
// Several nodes change none of the host's network: their control plane's
// address is on the underlay (makeUnderlay), and their forwarding and
// bridge netfilter are their own namespaces'; each gets its cgroup root.
func (n *Node) prepareHost() error {
	if err := os.MkdirAll(n.Dir, 0o755); err != nil {
		return err
	}
	n.st.Sysctls = map[string]string{}
	for _, s := range sysctls {
		if n.Multi() && !hostWide(s) {
			continue // a namespace's own: not the host's to save
		}
		if v, ok := readSysctl(s); ok {
			n.st.Sysctls[s] = v
		}
	}
	if err := n.st.save(); err != nil {
		return err
	}
	n.st.Members = append([]Member(nil), n.Members...)
	if err := n.st.save(); err != nil {
		return err
	}
	if !n.Multi() {
		if _, err := run(context.Background(), "ip", "addr", "add", n.Addr.NodeIP+"/32", "dev", "lo"); err != nil {
			return err
		}
		n.st.AddedAddr = true
		if err := n.st.save(); err != nil {
			return err
		}
		for _, s := range []string{"net.ipv4.ip_forward", "net.bridge.bridge-nf-call-iptables"} {
			if err := os.WriteFile(sysctlPath(s), []byte("1"), 0o644); err != nil {
				return fmt.Errorf("sysctl %s=1: %w", s, err)
			}
		}
	}
	for _, m := range n.Members {
		if err := makeCgroupRoot(m.CgroupRoot); err != nil {
			return err
		}
	}
	return nil
}

// makeCgroupRoot makes a kubelet's cgroup root in every controller.
func makeCgroupRoot(root string) error {
	for _, c := range cgroupControllers() {
		if strings.Contains(c, ",") {
			continue
		}
		d := filepath.Join("/sys/fs/cgroup", c, root)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("cgroup %s: %w", d, err)
		}
		if c == "cpuset" {
			// A new cpuset cgroup has no CPUs until given its parent's.
			for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
				b, err := os.ReadFile(filepath.Join("/sys/fs/cgroup/cpuset", f))
				if err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(d, f), b, 0o644); err != nil {
					return fmt.Errorf("cgroup %s/%s: %w", d, f, err)
				}
			}
		}
	}
	return nil
}

// checkAddressFree refuses to start when the node's address is already
// on the machine: another node (a `make cluster-up` in another directory)
// is up.
func checkAddressFree(ip string) error {
	ifs, err := net.Interfaces()
	if err != nil {
		return err
	}
	for _, i := range ifs {
		addrs, _ := i.Addrs()
		for _, a := range addrs {
			if p, ok := a.(*net.IPNet); ok && p.IP.String() == ip {
				return fmt.Errorf("address %s is already on %s: another node is up (take it down with `make cluster-down`, or its own directory's down)", ip, i.Name)
			}
		}
	}
	return nil
}
