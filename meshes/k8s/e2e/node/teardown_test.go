package node

import (
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
