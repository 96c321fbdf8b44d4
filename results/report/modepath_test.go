package report

import "testing"

// TestModePath checks that the lab's path names, written by ModePath, read
// back by SplitModePath as the mode and path they were made of, for every
// lab mode and path name shape.
func TestModePath(t *testing.T) {
	for _, c := range []struct{ mode, path, want string }{
		{"vxlan", "pod-pod-other-node", "vxlan.pod-pod-other-node"},
		{"host-gw", "node-service-local", "host-gw.node-service-local"},
		{"ebpf", "pod-own-node", "ebpf.pod-own-node"},
	} {
		got := ModePath(c.mode, c.path)
		if got != c.want {
			t.Errorf("ModePath(%q, %q) = %q, want %q", c.mode, c.path, got, c.want)
		}
		if m, p := SplitModePath(got); m != c.mode || p != c.path {
			t.Errorf("SplitModePath(%q) = %q, %q; want %q, %q", got, m, p, c.mode, c.path)
		}
	}
}
