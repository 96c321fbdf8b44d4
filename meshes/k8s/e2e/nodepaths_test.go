package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"loadgen/meshes/k8s/e2e/node"
	"loadgen/meshes/k8s/paths"
	"loadgen/results/compare"
)

// pathsAcross runs `loadgen k8s paths` across a cluster of two nodes
// (what: its CNI, for the log) in namespace ns, 3 s a sample, one repeat,
// with args (--paths, --tests …), and reads its table. Every row must
// have a figure, no failure, and its client on the other node; how far
// below the host's a pod row falls is not judged (exit 99 passes).
//
// A run whose only failures are its runs' own verdicts (nothing
// succeeded, or nothing answered for a second or more: a request timed
// out or was refused) is measured once more, its first table and why
// logged: CI failed once so (2026-12-07) on host-host TCP_RR (Cilium, the
// machine busy with the other node tests; the pod stream just before ran
// at a tenth of its usual rate), saying only "exit status 1" then, and
// five runs here since (one beside two CPU hogs, one of the whole node
// stage) did not repeat it. A path that does not carry traffic fails
// both; any other failure fails at once.
func pathsAcross(t *testing.T, n *node.Node, bin, what, ns string, args ...string) *paths.Table {
	t.Helper()
	for attempt := 1; ; attempt++ {
		dir := filepath.Join(t.TempDir(), "paths")
		r := runLoadgen(t, bin, n.Kubeconfig, 6*time.Minute, append([]string{"k8s", "paths", "--image", n.Image, "-n", ns,
			"-d", "3s", "--repeats", "1", "--tolerance", "99%", "-o", dir, "-q"}, args...)...)
		t.Logf("loadgen k8s paths across the two nodes (%s): exit %d\n%s", what, r.code, r.stdout)
		tab, err := paths.ReadTable(dir)
		if r.code != 0 && attempt == 1 && err == nil && onlyVerdicts(tab) {
			t.Logf("k8s paths: only its runs' own verdicts failed (above): measuring once more\n%s", r.stderr)
			continue
		}
		// Exit 99: a judged row fell further below its hostNetwork row
		// than --tolerance 99%. Twice in CI (2026-12-07/08) the pods'
		// stream through Cilium's tunnel ran at 1–15% of the host's on a
		// machine busy with the other node tests (flag M), never alone: a
		// figure of the machine, which this test does not judge — its
		// rows must carry traffic (below), and the caller checks where
		// it went.
		below := r.code == int(compare.Breached) && err == nil && onlyBelow(tab)
		if below {
			t.Logf("k8s paths: exit %d, a row below its hostNetwork row's tolerance (above): not judged here", r.code)
		}
		if r.code != 0 && !below {
			t.Fatalf("k8s paths: %v\n%s", r, n.Logs(10))
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range tab.Rows {
			if row.Median == nil || !(*row.Median > 0) || len(row.Failures) > 0 || row.ClientNode != tab.Nodes.Other {
				t.Errorf("%s %s: median %v, failures %v, client on %s", row.Path, row.Test, row.Median, row.Failures, row.ClientNode)
			}
		}
		return tab
	}
}

// onlyVerdicts tells whether tab has failures and all are runs' own
// verdicts (results.Summary.Verdict: the step kept its run).
func onlyVerdicts(tab *paths.Table) bool {
	some := false
	for _, row := range tab.Rows {
		for _, f := range row.Failures {
			if !strings.Contains(f, ": no request succeeded: ") && !strings.Contains(f, ": the target stopped answering") {
				return false
			}
			some = true
		}
	}
	return some
}

// onlyBelow tells whether some row of tab is below its tolerance and
// every other is measured and judged within it or not judged.
func onlyBelow(tab *paths.Table) bool {
	some := false
	for _, row := range tab.Rows {
		switch row.Verdict {
		case paths.VerdictBelow:
			some = true
		case paths.VerdictBaseline, paths.VerdictOK, paths.VerdictNotJudged:
		default:
			return false
		}
	}
	return some
}

// TestOnlyVerdicts: pathsAcross measures again only when every failure is
// a worker's run failing its own verdict.
func TestOnlyVerdicts(t *testing.T) {
	verdict := "repeat 1: the target stopped answering for 2s, from 0.5s to 2.5s of 3s (timeout × 1)"
	other := "repeat 1: worker 0 (pod p) never finished: Pending"
	for _, c := range []struct {
		failures [][]string
		want     bool
	}{
		{[][]string{nil, {verdict}}, true},
		{[][]string{{verdict}, {"repeat 1: no request succeeded: 1 of 1 failed (timeout × 1)"}}, true},
		{[][]string{{verdict}, {other}}, false},
		{[][]string{{verdict, other}}, false},
		{[][]string{nil, nil}, false},
	} {
		tab := &paths.Table{}
		for _, f := range c.failures {
			tab.Rows = append(tab.Rows, paths.Row{Failures: f})
		}
		if got := onlyVerdicts(tab); got != c.want {
			t.Errorf("%q: %v, want %v", c.failures, got, c.want)
		}
	}
}

// TestOnlyBelow: exit 99 passes pathsAcross only when it comes from rows
// below their tolerance, every other row measured.
func TestOnlyBelow(t *testing.T) {
	for _, c := range []struct {
		verdicts []string
		want     bool
	}{
		{[]string{paths.VerdictBaseline, paths.VerdictBelow, paths.VerdictNotJudged}, true},
		{[]string{paths.VerdictBaseline, paths.VerdictOK}, false},
		{[]string{paths.VerdictBelow, paths.VerdictFailed}, false},
		{[]string{paths.VerdictBelow, paths.VerdictNoBaseline}, false},
	} {
		tab := &paths.Table{}
		for _, v := range c.verdicts {
			tab.Rows = append(tab.Rows, paths.Row{Verdict: v})
		}
		if got := onlyBelow(tab); got != c.want {
			t.Errorf("%v: %v, want %v", c.verdicts, got, c.want)
		}
	}
}
