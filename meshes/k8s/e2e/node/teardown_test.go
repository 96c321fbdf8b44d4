package node

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"testing"
)

// A rule as iptables-save prints it splits into the arguments iptables
// takes back: a quoted comment is one argument, without its quotes.
func TestSaveFields(t *testing.T) {
	for _, c := range []struct {
		line string
		want []string
	}{
		{`-A INPUT -m conntrack --ctstate NEW -m comment --comment "kubernetes load balancer firewall" -j KUBE-PROXY-FIREWALL`,
			[]string{"-A", "INPUT", "-m", "conntrack", "--ctstate", "NEW", "-m", "comment", "--comment", "kubernetes load balancer firewall", "-j", "KUBE-PROXY-FIREWALL"}},
		{`-A FORWARD  -j KUBE-FORWARD`, []string{"-A", "FORWARD", "-j", "KUBE-FORWARD"}},
		{`-A X -m comment --comment "a \"b\" c" -j Y`, []string{"-A", "X", "-m", "comment", "--comment", `a "b" c`, "-j", "Y"}},
		{`-A X --comment "" -j Y`, []string{"-A", "X", "--comment", "", "-j", "Y"}},
	} {
		if got := saveFields(c.line); !slices.Equal(got, c.want) {
			t.Errorf("%s:\n got %q\nwant %q", c.line, got, c.want)
		}
	}
}

// Several nodes' directory with no state in it: what is left is looked
// for in the directory alone, never in the one node's chains, cgroups or
// bridge, which may be up beside (the one node of the other node tests).
func TestLeftoversOfSeveralWithoutState(t *testing.T) {
	if got := leftovers(t.TempDir(), nil, true); len(got) != 0 {
		t.Errorf("leftovers of an empty directory of several nodes: %q", got)
	}
}

// A namespace number is the kernel's to hand out again once the namespace
// is gone: a pod the one node starts beside several nodes' teardown may
// get the number the underlay's switch had. Its processes are not the
// switch's: its namespace is pinned at another path (as containerd pins a
// pod's), and the holders of the switch's number are none. Run on two
// real namespaces, a process in one of them.
func TestNamespaceNumberReusedIsNotOurs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (ip netns)")
	}
	ours, theirs := fmt.Sprintf("lgt-ours-%d", os.Getpid()), fmt.Sprintf("lgt-theirs-%d", os.Getpid())
	for _, ns := range []string{ours, theirs} {
		if out, err := exec.Command("ip", "netns", "add", ns).CombinedOutput(); err != nil {
			t.Fatalf("ip netns add %s: %v: %s", ns, err, out)
		}
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	}
	sleep := exec.Command("ip", "netns", "exec", theirs, "sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- sleep.Wait() }()
	t.Cleanup(func() { sleep.Process.Kill(); <-ended })
	inode := netnsInode(theirs)
	// Wait for the process to be in the namespace (ip exec's setns).
	for !slices.Contains(inodeHolders(inode, theirs), sleep.Process.Pid) {
		select {
		case err := <-ended:
			ended <- err
			t.Fatalf("ip netns exec %s sleep ended: %v", theirs, err)
		default:
			runtime.Gosched()
		}
	}
	// Its number, as though ours had had it: another path pins it.
	if got := inodeHolders(inode, ours); len(got) != 0 {
		t.Errorf("holders of a number pinned at %s, asked as %s's: %v, want none", theirs, ours, got)
	}
	if !pinnedElsewhere(inode, netnsPath(ours)) || pinnedElsewhere(inode, netnsPath(theirs)) {
		t.Errorf("pinnedElsewhere: %s's number should be pinned elsewhere than %s, and not elsewhere than its own path", theirs, ours)
	}
}

// mountinfo's nsfs lines: the root field names the namespace, the next
// its mount point.
func TestMountedElsewhere(t *testing.T) {
	info := "46 45 0:4 net:[4026532174] /run/netns/a rw shared:2 - nsfs nsfs rw\n" +
		"47 45 0:4 net:[4026532175] /var/tmp/n/netns/cni-1 rw shared:2 - nsfs nsfs rw\n"
	for _, c := range []struct {
		root, own string
		want      bool
	}{
		{"net:[4026532174]", "/run/netns/a", false},
		{"net:[4026532175]", "/run/netns/a", true},
		{"net:[4026532176]", "/run/netns/a", false},
	} {
		if got := mountedElsewhere(info, c.root, c.own); got != c.want {
			t.Errorf("mountedElsewhere(%s, %s) = %v, want %v", c.root, c.own, got, c.want)
		}
	}
}
