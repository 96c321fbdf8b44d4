package run

import (
	"strings"

	"loadgen/meshes/k8s"
)

// scheduleHint says what to change when a step failed because its workers
// could not be placed: the scheduler's "didn't match pod anti-affinity
// rules" is the rule that keeps them off the targets' and the proxies'
// nodes (--same-node-ok makes it a preference), "didn't match Pod's node
// affinity/selector" is --worker-node-selector, and "untolerated taint"
// a taint no --worker-toleration tolerates. "" when none applies.
func scheduleHint(failed string, o k8s.Options) string {
	var hints []string
	if strings.Contains(failed, "didn't match pod anti-affinity rules") && !o.SameNodeOK {
		hints = append(hints, "the workers keep off the nodes of the target and the proxies: give the cluster another node, or --same-node-ok to let them share one")
	}
	if strings.Contains(failed, "didn't match Pod's node affinity/selector") && len(o.WorkerNodeSelector) > 0 {
		hints = append(hints, "no node has the labels of --worker-node-selector")
	}
	if strings.Contains(failed, "untolerated taint") {
		hints = append(hints, "a node's taint is not tolerated: --worker-toleration KEY[=VALUE]:EFFECT")
	}
	if len(hints) == 0 {
		return ""
	}
	return " (" + strings.Join(hints, "; ") + ")"
}
