package study

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"loadgen/loadgen/sweep"
	"loadgen/results"
	"loadgen/results/report"
)

// sideCost is a made-up watch of one sidecar side, its per-1k figures
// as the step recorded them (k8s run's cpu_per_1k and mib_per_1k).
func sideCost(name, side string, cpu1k, mib1k float64) results.ProcessCost {
	return results.ProcessCost{Name: name, Role: "proxy", Side: side, CPUPer1kRPS: cpu1k, MiBPer1kRPS: mib1k}
}

// mesh-ladder's sidecar table gives, per proxy, rung and payload, the
// client's and the server's CPU and memory per 1,000 requests/s of a
// cluster's run apart (not summed into one figure), beside the local
// sweep's row of the same cell, and every rung and payload the runs
// measured (c1t1 × 1 KiB included).
func TestSideRows(t *testing.T) {
	root := "/r"
	cl := &report.Sweep{Name: root + "/k8s-sidecar-haproxy", Manifest: &results.Manifest{Baseline: "direct"}}
	local := &report.Sweep{Name: root + "/sweep", Manifest: &results.Manifest{Baseline: "baseline"}}
	type cell struct{ conns, payload int }
	cells := []cell{{1, 100}, {1, 1024}, {16, 100}, {16, 1024}}
	// Each cell's figures differ, so a row read from the wrong cell shows.
	client := func(c cell, i int) float64 { return 0.01*float64(c.conns) + float64(c.payload)/1e5 + float64(i)/1000 }
	server := func(c cell, i int) float64 { return 2 * client(c, i) }
	mib := func(c cell, i int, k float64) float64 { return k * (1 + float64(c.payload)/1024 + float64(i)/10) }
	for i := range 3 {
		for _, c := range cells {
			cl.Steps = append(cl.Steps,
				sidecarStep("direct", c.payload, c.conns, i, 50000, 0.1),
				sidecarStep("mesh", c.payload, c.conns, i, 10000, 0.3,
					sideCost("client-proxy", "client", client(c, i), mib(c, i, 1)),
					sideCost("server-proxy", "server", server(c, i), mib(c, i, 3)),
					results.ProcessCost{Name: "target", Role: "target", CPUPer1kRPS: 9, MiBPer1kRPS: 9}))
			local.Steps = append(local.Steps,
				sidecarStep("baseline", c.payload, c.conns, i, 60000, 0.1),
				sidecarStep("haproxy", c.payload, c.conns, i, 20000, 0.2,
					results.ProcessCost{Name: "haproxy", Role: "proxy", CPUPer1kRPS: 5 * client(c, i), MiBPer1kRPS: mib(c, i, 7)}))
		}
	}
	for _, sw := range []*report.Sweep{cl, local} {
		for _, st := range sw.Steps {
			st.Run.Summary.Requests = int64(st.Run.Summary.RPS * 10) // answered: report's cells have figures
		}
	}
	m := measuredFrom(root, []*report.Sweep{local, cl})
	rows := m.SideRows()
	if len(rows) != 2*len(cells) {
		t.Fatalf("%d rows, want %d (a cluster's and a local row per cell): %+v", len(rows), 2*len(cells), rows)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for k, c := range cells {
		cr, lr := rows[2*k], rows[2*k+1]
		name := fmt.Sprintf("c%dt%d × %d B", c.conns, c.conns, c.payload)
		if cr.Proxy != "haproxy" || !cr.Cluster || lr.Cluster || cr.Conns != c.conns || cr.Payload != c.payload || lr.Conns != c.conns || lr.Payload != c.payload {
			t.Fatalf("%s: rows %+v / %+v", name, cr, lr)
		}
		// The median repeat is the second (i = 1).
		if s := cr.Mesh.Client; !s.Has || !near(s.CPUPer, client(c, 1)) || !near(s.MiBPer1, mib(c, 1, 1)) {
			t.Errorf("%s: client side %+v, want %.4f cores and %.4f MiB per 1k", name, s, client(c, 1), mib(c, 1, 1))
		}
		if s := cr.Mesh.Server; !s.Has || !near(s.CPUPer, server(c, 1)) || !near(s.MiBPer1, mib(c, 1, 3)) {
			t.Errorf("%s: server side %+v, want %.4f cores and %.4f MiB per 1k", name, s, server(c, 1), mib(c, 1, 3))
		}
		if !cr.HasBothCPU || !near(cr.BothCPU, client(c, 1)+server(c, 1)) || !near(cr.BothMiB, mib(c, 1, 4)) {
			t.Errorf("%s: both sides %v %v, want the two sides' sum", name, cr.BothCPU, cr.BothMiB)
		}
		if lr.Mesh.Client.Has || lr.Mesh.Server.Has || !near(lr.BothCPU, 5*client(c, 1)) || !near(lr.BothMiB, mib(c, 1, 7)) {
			t.Errorf("%s: local row %+v", name, lr)
		}
		if !cr.Base.OK || !near(cr.Base.RPS, 50000) || !near(lr.Base.RPS, 60000) || !near(cr.Mesh.AddP50, 0.2e6) {
			t.Errorf("%s: baselines %+v / %+v, added p50 %v", name, cr.Base, lr.Base, cr.Mesh.AddP50)
		}
	}
	var b bytes.Buffer
	if err := WriteSides(&b, rows); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"client cpu/1k", "server cpu/1k", "client MiB/1k", "server MiB/1k", "c1t1, 1KiB", "c16t16, 100B",
		fmt.Sprintf("%.3f", server(cells[1], 1)), fmt.Sprintf("%.3f", mib(cells[1], 1, 3)), "10000 / 50000", "+200µs"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
	if got := strings.Count(out, "\n"); got != 3+len(rows) {
		t.Errorf("%d lines, want a title, a note, a header and a line per row:\n%s", got, out)
	}
}

// On a cluster the study's plan runs 1 KiB beside 100 B (the sidecar
// rows' table reads it); a ladder capped for a machine is one the sweep
// takes, keeps the rungs the tables read, and says why in one line.
func TestClusterPayloadsAndMachineLadder(t *testing.T) {
	ml, err := Lookup("mesh-ladder")
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range ml.Plan(Options{Kubeconfig: "/k", Meshes: []string{SidecarMesh}}) {
		if f := st.Files["mesh-ladder.yaml"]; !strings.Contains(f, "payloads: [100, 1KiB, 1MiB]") {
			t.Errorf("%s: the sweep file's payloads:\n%s", st.Dir, f)
		}
	}
	if local := ml.Plan(Options{})[0]; argValue(local.Args, "--payloads") != StudyPayloads {
		t.Errorf("the local plan's payloads: %v", local.Args)
	}
	for _, c := range []struct {
		cpus  int
		rungs []int
	}{{1, []int{1, 16}}, {2, []int{1, 16}}, {4, []int{1, 16, 32}}, {8, []int{1, 16, 32, 64}}} {
		ladder, capped := MachineLadder(c.cpus)
		rungs, err := sweep.ParseLadder(ladder)
		if err != nil {
			t.Fatalf("%d CPUs: %q: %v", c.cpus, ladder, err)
		}
		var conns []int
		for _, r := range rungs {
			conns = append(conns, r.Connections)
		}
		if !slices.Equal(conns, c.rungs) || strings.Contains(capped, "\n") ||
			!strings.Contains(capped, fmt.Sprintf("%d CPUs carry", c.cpus)) || !strings.Contains(capped, StudyLadder) {
			t.Errorf("%d CPUs: %q (%v), %q", c.cpus, ladder, conns, capped)
		}
	}
	if ladder, capped := MachineLadder(16); ladder != StudyLadder || capped != "" {
		t.Errorf("16 CPUs: %q, %q: want the study's own ladder", ladder, capped)
	}
}
