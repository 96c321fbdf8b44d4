package report

import (
	"bytes"
	"strings"
	"testing"

	"loadgen/results"
)

// fixtureCNIModes is the CNI fixture's one path measured under two modes
// (as loadgen lab names them, MODE.PATH) beside the mode-less baseline.
func fixtureCNIModes(t testing.TB) []*Sweep {
	var out []*Sweep
	for i, s := range fixtureCNI(t) {
		st := s.Steps[0]
		var steps []*results.Step
		for j, name := range []string{"loopback", "host-gw.pod-pod-other-node", "vxlan.pod-pod-other-node"} {
			c := *st
			run := *st.Run
			c.Run, c.Path = &run, name
			// Slower per mode, so the cells differ.
			run.Summary.WritePerSec = st.Run.Summary.WritePerSec / float64(j+1)
			run.Summary.Latency.Mean = st.Run.Summary.Latency.Mean * results.Duration(j+1)
			steps = append(steps, &c)
		}
		out = append(out, &Sweep{Name: fixtureCNI(t)[i].Name, Steps: steps})
	}
	return out
}

func TestCNIGrid(t *testing.T) {
	rows := CNIMatrix(fixtureCNIModes(t))
	g := Grid(rows)
	if strings.Join(g.Paths, ",") != "loopback,pod-pod-other-node" || strings.Join(g.Modes, ",") != ",host-gw,vxlan" {
		t.Fatalf("grid paths %q modes %q", g.Paths, g.Modes)
	}
	hg, vx := g.Cell("pod-pod-other-node", "host-gw"), g.Cell("pod-pod-other-node", "vxlan")
	if hg == nil || vx == nil || g.Cell("loopback", "vxlan") != nil {
		t.Fatal("missing or extra cells")
	}
	if !(vx.Gbps < hg.Gbps) || !(vx.RR > hg.RR) {
		t.Errorf("vxlan %+v vs host-gw %+v", vx, hg)
	}
	for _, c := range []struct{ in, mode, path string }{
		{"vxlan.pod-pod-other-node", "vxlan", "pod-pod-other-node"}, {"loopback", "", "loopback"}, {".x", "", ".x"}, {"x.", "", "x."},
	} {
		if m, p := SplitModePath(c.in); m != c.mode || p != c.path {
			t.Errorf("SplitModePath(%q) = %q, %q", c.in, m, p)
		}
	}
	var buf bytes.Buffer
	if err := CNITable(&buf, fixtureCNIModes(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "cni-modes.txt", buf.Bytes())
}

// The HTML report draws the matrix per metric, a bar per mode.
func TestCNIBarCharts(t *testing.T) {
	var buf bytes.Buffer
	if err := HTML(&buf, fixtureCNIModes(t), Options{Title: "CNI"}); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, id := range []string{"cni-tcp_stream", "cni-tcp_rr", "cni-tcp_crr"} {
		if !strings.Contains(page, `<svg class="chart" id="`+id+`"`) {
			t.Errorf("no bar chart %s", id)
		}
	}
	// 3 metrics × (loopback + the path in two modes).
	if n := strings.Count(page, `<rect class="bar"`); n != 9 {
		t.Errorf("%d bars, want 9", n)
	}
	if !strings.Contains(page, "<title>vxlan pod-pod-other-node: ") {
		t.Error("bars have no tooltips naming mode and path")
	}
	var plain bytes.Buffer
	if err := HTML(&plain, fixtureCNI(t), Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), `class="bar"`) {
		t.Error("a lab without modes got per-mode bar charts")
	}
}
