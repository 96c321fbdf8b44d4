package report

import (
	"bytes"
	"strings"
	"testing"

	"loadgen/results"
)

// cniStep is a raw TCP step of a lab's sweep: its mean latency in µs (0:
// the step failed) and its throughput for tcp-stream.
func cniStep(proto, path, rung string, conns, repeat int, meanUS float64) *results.Step {
	st := &results.Step{Path: path, Rung: rung, Connections: conns, Threads: conns, Payload: 1024, Repeat: repeat}
	if meanUS == 0 {
		st.Failed = "no connection"
		return st
	}
	st.Run = &results.Run{Config: results.Config{Protocol: proto}}
	st.Run.Summary.Latency.Mean = results.Duration(meanUS * 1e3)
	return st
}

// The title of lab's matrix names the ladder step its latencies were read
// at, the lightest, not the ladder's first: a ladder given heaviest first
// (--ladder c4t4,c1t1) runs c4t4 first and is read at c1t1.
func TestCNISectionTitle(t *testing.T) {
	for _, tc := range []struct {
		name  string
		steps []*results.Step
		title string
	}{
		{"ladder given heaviest first", []*results.Step{
			cniStep("tcp-rr", "vxlan.node-node", "c4t4", 4, 1, 90),
			cniStep("tcp-rr", "vxlan.node-node", "c1t1", 1, 1, 30),
		}, "CNI path matrix (network namespaces on one machine; latency is the mean at c1t1, the median over repeats)"},
		{"lightest first", []*results.Step{
			cniStep("tcp-rr", "vxlan.node-node", "c1t1", 1, 1, 30),
			cniStep("tcp-rr", "vxlan.node-node", "c4t4", 4, 1, 90),
		}, "CNI path matrix (network namespaces on one machine; latency is the mean at c1t1, the median over repeats)"},
		{"a path failed at the lightest", []*results.Step{
			cniStep("tcp-rr", "vxlan.node-node", "c4t4", 4, 1, 90),
			cniStep("tcp-rr", "vxlan.node-node", "c1t1", 1, 1, 30),
			cniStep("tcp-rr", "udp.node-node", "c4t4", 4, 1, 300),
			cniStep("tcp-rr", "udp.node-node", "c1t1", 1, 1, 0),
		}, "CNI path matrix (network namespaces on one machine; latency is the mean at each path's fewest connections with a figure (c1t1, c4t4), the median over repeats)"},
		{"throughput only", []*results.Step{
			cniStep("tcp-stream", "vxlan.node-node", "c4t4", 4, 1, 90),
		}, "CNI path matrix (network namespaces on one machine)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := cniSection(&buf, []*Sweep{{Name: "tcp-rr", Steps: tc.steps}}); err != nil {
				t.Fatal(err)
			}
			first, _, _ := strings.Cut(strings.TrimPrefix(buf.String(), "\n"), "\n")
			if first != tc.title {
				t.Errorf("title %q, want %q", first, tc.title)
			}
		})
	}
	// The figure under that title is c1t1's.
	var buf bytes.Buffer
	if err := cniSection(&buf, []*Sweep{{Steps: []*results.Step{
		cniStep("tcp-rr", "vxlan.node-node", "c4t4", 4, 1, 90),
		cniStep("tcp-rr", "vxlan.node-node", "c1t1", 1, 1, 30),
	}}}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "30.0") || strings.Contains(buf.String(), "90.0") {
		t.Errorf("the matrix is not read at c1t1:\n%s", buf.String())
	}
}

// Sweeps that drove no raw TCP protocol print nothing; the lab's
// directories are read as the report reads them.
func TestCNISectionDirs(t *testing.T) {
	var buf bytes.Buffer
	if err := cniSection(&buf, []*Sweep{{Steps: []*results.Step{cniStep("http1", "direct", "c1t1", 1, 1, 30)}}}); err != nil || buf.Len() > 0 {
		t.Errorf("no raw TCP: %v, %q", err, buf.String())
	}
	if err := CNISection(&buf, []string{"testdata/cni/tcp-rr", "testdata/cni/tcp-crr", "testdata/cni/tcp-stream"}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), "\nCNI path matrix (network namespaces on one machine; latency is the mean at c1t1, the median over repeats)\n") {
		t.Errorf("testdata/cni's section:\n%s", buf.String())
	}
	if err := CNISection(&buf, []string{"testdata/no-such-sweep"}); err == nil {
		t.Error("a directory that is no sweep: no error")
	}
}
