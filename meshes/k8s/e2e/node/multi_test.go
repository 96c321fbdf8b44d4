package node

import "testing"

// Every CNI of several nodes runs its kube-proxies in the nodes'
// namespaces: teardown must leave the host's chains and bridge, which a
// one-node cluster beside them may be using, for each of them.
func TestStateMultiForEveryMultiNodeCNI(t *testing.T) {
	for _, cni := range MultiCNIs {
		if !(&state{CNI: cni}).multi() {
			t.Errorf("a %s cluster's teardown would take the host's chains and bridge", cni)
		}
	}
	if (&state{}).multi() || (&state{CNI: CNIBridge}).multi() {
		t.Error("a one-node cluster's teardown must take its own chains and bridge")
	}
	var none *state
	if none.multi() {
		t.Error("no state: not several nodes")
	}
}
