package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"loadgen/meshes/leftover"
)

// Addresses of the lab. They are all in 198.18.0.0/15 (RFC 2544), which
// is reserved for benchmarking and never routed on a real network.
const (
	node1IP     = "198.18.0.1"
	node2IP     = "198.18.0.2"
	node1Net    = "198.18.1.0/24"
	node2Net    = "198.18.2.0/24"
	node1GW     = "198.18.1.1" // cni0 on node1, bridged modes
	node2GW     = "198.18.2.1"
	svcLocalIP  = "198.19.0.10" // endpoint pod1b, on node1
	svcRemoteIP = "198.19.0.11" // endpoint pod2a, on node2
	serviceNet  = "198.19.0.0/16"
	node1Tun    = "198.18.4.1" // vxlan0, geneve0
	node2Tun    = "198.18.4.2"

	underlayMTU = 1500
)

// podAddrs are the pods' addresses: on the nodes' pod subnets, or, for
// macvlan, on the underlay's own.
type podAddrs struct{ pod1a, pod1b, pod2a string }

func (l *Lab) addrs() podAddrs {
	if l.mode == Macvlan {
		return podAddrs{"198.18.0.10", "198.18.0.11", "198.18.0.20"}
	}
	return podAddrs{"198.18.1.10", "198.18.1.11", "198.18.2.10"}
}

// Device names inside the lab's namespaces. They only have to be unique
// per namespace, so fixed names are safe for concurrent labs; all are at
// most 15 bytes (IFNAMSIZ-1).
const (
	underlayDev = "underlay"
	vxlanDev    = "vxlan0"
	geneveDev   = "geneve0"
	ipipDev     = "ipip0"
	tunDev      = "flannel0"
	bridgeDev   = "cni0"
	podDev      = "eth0"
)

// Short names of the namespaces, in creation order; a lab's names are its
// prefix followed by one of these.
const (
	node1 = "node1"
	node2 = "node2"
	pod1a = "pod1a"
	pod1b = "pod1b"
	pod2a = "pod2a"
)

var shortNames = []string{node1, node2, pod1a, pod1b, pod2a}

// maxPrefix keeps namespace names (files in /var/run/netns) short and
// readable in `ip netns list`.
const maxPrefix = 32

// Config configures a lab.
type Config struct {
	// Mode is the CNI datapath to build; "" is HostGW.
	Mode Mode
	// Prefix starts the name of every namespace the lab creates, so that
	// concurrent labs do not collide and Cleanup can find leftovers. Use
	// letters, digits, '-', '_' and '.', starting with a letter or digit.
	// "" means "lg<pid>-<mode>-" (with a counter added for a second lab of
	// the mode in the same process).
	Prefix string
	// Paths limits the lab to these paths (PathNames); none means all. The
	// Services, and with them iptables, are only built for a Service path.
	Paths []string
	// TunnelCommand runs the udp mode's tunnel: a command that calls
	// RunUDPTunnel with ParseTunnelArgs of the arguments the lab appends
	// (`loadgen lab udp-tunnel`). It runs inside each node's namespace, a
	// process of its own as flanneld is. Needed for UDP only.
	TunnelCommand []string
}

func (c Config) mode() Mode {
	if c.Mode == "" {
		return HostGW
	}
	return c.Mode
}

// wants tells whether the lab must build the path called name.
func (c Config) wants(name string) bool { return len(c.Paths) == 0 || slices.Contains(c.Paths, name) }

// needsServices tells whether any wanted path goes through a Service the
// mode has.
func (c Config) needsServices() bool {
	if c.mode().serviceBy() == "" {
		return false
	}
	for _, n := range PathNames() {
		if IsServicePath(n) && c.wants(n) {
			return true
		}
	}
	return false
}

// NeedsIPTables tells whether a lab of this configuration runs iptables:
// only for the Service paths, and only in modes with Services.
func (c Config) NeedsIPTables() bool { return c.needsServices() }

// Validate checks the configuration without touching the system.
func (c Config) Validate() error {
	if !c.mode().Valid() {
		_, err := ParseModes(string(c.Mode))
		return err
	}
	for _, n := range c.Paths {
		if !slices.Contains(PathNames(), n) {
			return fmt.Errorf("no path %q: the lab has %v", n, PathNames())
		}
	}
	if c.mode() == UDP && len(c.TunnelCommand) == 0 {
		return errors.New("the udp mode needs Config.TunnelCommand, the command that runs its user-space tunnel")
	}
	if c.Prefix != "" {
		return validPrefix(c.Prefix)
	}
	return nil
}

// Lab is a running lab of one mode. Its methods are safe for concurrent use.
type Lab struct {
	prefix     string
	mode       Mode
	cfg        Config
	namespaces []string
	paths      []Path

	tunnels []*exec.Cmd // the udp mode's tunnel processes
	bpf     *bpfState   // the ebpf mode's programs and links

	mu     sync.Mutex
	closed bool
}

// defaultLabs counts labs started with a default prefix in this process,
// so a second one gets a different prefix.
var defaultLabs atomic.Int64

func (c Config) prefix() (string, error) {
	p := c.Prefix
	if p == "" {
		p = leftover.Name("-" + string(c.mode()) + "-")
		if n := defaultLabs.Add(1) - 1; n > 0 {
			p += fmt.Sprintf("%d-", n)
		}
	}
	if err := validPrefix(p); err != nil {
		return "", err
	}
	return p, nil
}

func validPrefix(p string) error {
	if p == "" {
		return errors.New("lab: empty namespace prefix")
	}
	if len(p) > maxPrefix {
		return fmt.Errorf("lab: namespace prefix %q is longer than %d bytes: use a shorter Config.Prefix", p, maxPrefix)
	}
	for i, r := range p {
		alnum := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		// A leading '-' would make `ip` read the name as an option.
		if !alnum && (i == 0 || r != '-' && r != '_' && r != '.') {
			return fmt.Errorf("lab: namespace prefix %q: use letters, digits, '-', '_' and '.', starting with a letter or digit", p)
		}
	}
	return nil
}

// NetnsFile is the file that pins the named namespace, as `ip netns`
// creates it. Open it and pass the descriptor to setns(2) with
// CLONE_NEWNET to enter the namespace.
func NetnsFile(ns string) string { return "/var/run/netns/" + ns }

// Start builds a lab of cfg's mode: five namespaces, wired as the package
// documentation shows. If any step fails it removes what it created and
// returns an error naming the failing command. ctx bounds the setup only;
// the lab lives until Close.
func Start(ctx context.Context, cfg Config) (*Lab, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("lab: %w", err)
	}
	// Only the cheap checks: a failing `ip` command below names itself,
	// and Available's probe namespace would slow every Start down.
	if err := tools(cfg.NeedsIPTables()); err != nil {
		return nil, err
	}
	prefix, err := cfg.prefix()
	if err != nil {
		return nil, err
	}
	l := &Lab{prefix: prefix, mode: cfg.mode(), cfg: cfg}
	if err := l.build(ctx); err != nil {
		// Clean up without ctx: it may be the reason we failed.
		if cerr := l.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		return nil, err
	}
	for _, p := range l.makePaths() {
		if cfg.wants(p.Name) {
			l.paths = append(l.paths, p)
		}
	}
	return l, nil
}

// ns is the full name of a namespace of this lab.
func (l *Lab) ns(short string) string { return l.prefix + short }

// Mode is the lab's CNI mode.
func (l *Lab) Mode() Mode { return l.mode }

// Paths returns the lab's paths (those Config.Paths asked for) in the
// order of PathNames; a path the mode has not is there with NotApplicable
// set.
func (l *Lab) Paths() []Path { return append([]Path(nil), l.paths...) }

// Namespaces returns the names of the lab's namespaces, nodes first.
func (l *Lab) Namespaces() []string { return append([]string(nil), l.namespaces...) }

// Command returns `ip netns exec ns name args...`: a command that runs
// inside one of the lab's namespaces. `ip netns exec` execs name, so the
// command's process is name itself.
func (l *Lab) Command(ctx context.Context, ns string, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", ns, name}, args...)...)
}

// Close stops the lab's own processes, detaches its BPF programs and
// removes every namespace of the lab, and with them every device and
// route in them. Processes still running inside a namespace keep it
// alive, nameless, until they exit, so stop servers first. Close is
// idempotent: later calls return nil.
func (l *Lab) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	var errs []error
	for _, t := range l.tunnels {
		stopProcess(t)
	}
	if l.bpf != nil {
		if err := l.bpf.close(); err != nil {
			errs = append(errs, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Pods first: deleting a pod deletes its veth's node end too.
	for i := len(l.namespaces) - 1; i >= 0; i-- {
		if err := deleteNS(ctx, l.namespaces[i]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func deleteNS(ctx context.Context, ns string) error {
	_, err := run(ctx, "ip", "netns", "del", ns)
	if err != nil {
		if _, serr := os.Stat(NetnsFile(ns)); errors.Is(serr, os.ErrNotExist) {
			return nil // already gone: that is what we wanted
		}
	}
	return err
}
