package main

import (
	"path/filepath"
	"testing"

	"loadgen/results/store"
)

// UDP across the lab's namespaces: `serve udp` beside `serve tcp` on the
// paths' ports, a Service path through the emulated kube-proxy's UDP
// rule, every datagram of every step accounted for by its receiver.
func TestLabUDP(t *testing.T) {
	needLab(t)
	t.Setenv("LOADGEN_TEST_AS_CLI", "1") // the lab runs this binary as `loadgen serve udp`
	dir := filepath.Join(t.TempDir(), "lab")
	code, out, stderr := cli(t, "lab", "--modes", "host-gw", "--paths", "pod-pod-other-node,pod-service-remote",
		"--protocols", "udp-rr,udp-stream,tcp-rr", "--ladder", "c1t1", "-d", "300ms", "--warmup", "100ms", "-o", dir, "-q")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	for _, proto := range []string{"udp-rr", "udp-stream"} {
		_, steps, err := store.ReadSweep(filepath.Join(dir, proto))
		if err != nil {
			t.Fatal(err)
		}
		if len(steps) != 2 {
			t.Fatalf("%s: %d steps, want 2", proto, len(steps))
		}
		for _, st := range steps {
			if st.Run == nil {
				t.Fatalf("%s %s failed: %s", proto, st.Path, st.Failed)
			}
			s, g := st.Run.Summary, st.Run.Summary.Datagrams
			if g == nil || s.Requests == 0 || st.Run.Config.NetNS == "" {
				t.Fatalf("%s %s: %d requests, datagrams %+v, netns %q", proto, st.Path, s.Requests, g, st.Run.Config.NetNS)
			}
			if g.Sent < s.Requests || g.Unknown != 0 || g.Received == 0 || g.Received+g.Lost != g.Sent {
				t.Errorf("%s %s: datagrams %+v for %d requests", proto, st.Path, *g, s.Requests)
			}
		}
	}
}
