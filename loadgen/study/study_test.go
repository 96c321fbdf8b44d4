package study

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"loadgen/results"
	"loadgen/results/report"
	"loadgen/results/store"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update to accept):\n%s", name, got)
	}
}

// TestPublished: the published figures, as the repository holds them,
// table by table with their sources.
func TestPublished(t *testing.T) {
	var b bytes.Buffer
	for _, s := range All() {
		p, ok, err := s.Published()
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			fmt.Fprintf(&b, "%s: none\n\n", s.Name)
			continue
		}
		fmt.Fprintf(&b, "%s\n", s.Name)
		for _, src := range p.Sources {
			fmt.Fprintf(&b, "source [%s]: %s\n  states: %s\n  checked: %s\n", src.Key, src.Line(), src.States, src.Checked)
		}
		for _, tb := range p.Tables {
			fmt.Fprintf(&b, "  %s (%s, %s; baseline %s; source %s", tb.Metric, tb.Unit, tb.Kind, tb.Baseline, tb.Source)
			if tb.Payload > 0 || tb.Rung != "" {
				fmt.Fprintf(&b, "; at %d B, %s", tb.Payload, tb.Rung)
			}
			b.WriteString(")\n")
			for _, r := range tb.Rows {
				v := "–"
				if r.Value != nil {
					v = fmt.Sprint(*r.Value)
				}
				fmt.Fprintf(&b, "    %-16s %10s  measured as %q", r.Key, v, r.Measure)
				if r.Source != "" {
					fmt.Fprintf(&b, "  [%s]", r.Source)
				}
				if r.SamePathAs != "" {
					fmt.Fprintf(&b, "  same path as %s", r.SamePathAs)
				}
				b.WriteString("\n")
			}
			for _, o := range tb.Orderings {
				fmt.Fprintf(&b, "    ordering: %s below %s\n", o[0], o[1])
			}
			for _, o := range tb.About {
				fmt.Fprintf(&b, "    about: %s about %s\n", o[0], o[1])
			}
		}
		b.WriteString("\n")
	}
	golden(t, "published.txt", b.Bytes())

	// The figures issues 12 and 25 quote.
	for _, c := range []struct {
		study, key string
		table      int
		value      float64
	}{
		{"flannel-backends", "direct", 0, 9.39}, {"flannel-backends", "vm-vm", 0, 7.74}, {"flannel-backends", "host-gw", 0, 6.0},
		{"flannel-backends", "vxlan", 0, 1.71}, {"flannel-backends", "udp", 0, 0.385},
		{"nginx-sizing", "1", 0, 45000}, {"nginx-sizing", "2", 0, 80000}, {"nginx-sizing", "4", 0, 135000}, {"nginx-sizing", "8", 0, 175000},
		{"nginx-sizing", "16", 0, 237000}, {"nginx-sizing", "32", 0, 290000}, {"nginx-sizing", "36", 0, 300000},
		{"nginx-sizing", "1", 1, 6700}, {"nginx-sizing", "2", 1, 12600}, {"nginx-sizing", "4", 1, 23000}, {"nginx-sizing", "8", 1, 40000},
		{"nginx-sizing", "16", 1, 68500}, {"nginx-sizing", "32", 1, 88800}, {"nginx-sizing", "36", 1, 92800},
		{"vpc-cni-grpc", "vpc-cni", 0, 10900}, {"vpc-cni-grpc", "calico", 0, 10700}, {"vpc-cni-grpc", "weave", 0, 10600},
		{"vpc-cni-grpc", "vpc-cni", 1, 3970}, {"vpc-cni-grpc", "calico", 1, 3520}, {"vpc-cni-grpc", "weave", 1, 1900},
		{"mesh-ladder", "istio-sidecar", 0, 0.20}, {"mesh-ladder", "istio-waypoint", 0, 0.25}, {"mesh-ladder", "ztunnel", 0, 0.06},
		{"mesh-ladder", "istio-1.12", 0, 0.35}, {"mesh-ladder", "istio-sidecar", 1, 60}, {"mesh-ladder", "ztunnel", 1, 12},
		{"mesh-ladder", "istio-1.12", 1, 40},
	} {
		p, _, _ := PublishedFor(c.study)
		i := slices.IndexFunc(p.Tables[c.table].Rows, func(r PublishedRow) bool { return r.Key == c.key })
		if i < 0 || p.Tables[c.table].Rows[i].Value == nil || *p.Tables[c.table].Rows[i].Value != c.value {
			t.Errorf("%s table %d row %s: want %g", c.study, c.table, c.key, c.value)
		}
	}
	// The sizing table's instances and monthly cost, every row.
	p, _, _ := PublishedFor("nginx-sizing")
	for i, want := range []string{"c5n.large, $100", "c5n.large, $100", "c5n.xlarge, $200", "c5n.2xlarge, $400", "c5n.4xlarge, $795", "c5n.9xlarge, $1790", "c5n.9xlarge, $1790"} {
		for _, tb := range p.Tables {
			if !strings.HasPrefix(tb.Rows[i].Note, want) {
				t.Errorf("nginx-sizing %s row %s: note %q, want %q", tb.Metric, tb.Rows[i].Key, tb.Rows[i].Note, want)
			}
		}
	}
}

// Every table names a source anyone can find: a title, and for published
// figures an address or an identifier; the only rows marked as one
// datapath here are vpc-cni-grpc's one-node host-gw and ipip.
func TestSources(t *testing.T) {
	var same []string
	for _, s := range All() {
		p, ok, _ := s.Published()
		if !ok {
			continue
		}
		for _, tb := range p.Tables {
			if tb.Unsourced != "" {
				t.Errorf("%s, %s: unsourced (%s)", s.Name, tb.Metric, tb.Unsourced)
			}
			for _, src := range p.TableSources(tb) {
				if src.Title == "" || src.States == "" || src.Checked == "" {
					t.Errorf("%s: source %+v", s.Name, src)
				}
			}
			for _, r := range tb.Rows {
				if r.SamePathAs != "" {
					same = append(same, s.Name+"/"+tb.Metric+"/"+r.Key+"="+r.SamePathAs)
				}
				if r.Value == nil {
					continue
				}
				key := cmpOr(r.Source, tb.Source)
				if src, ok := p.SourceOf(key); !ok || !src.Findable() {
					t.Errorf("%s, %s, row %s: a figure whose source %q has no address or identifier", s.Name, tb.Metric, r.Key, key)
				}
			}
		}
	}
	if want := []string{"vpc-cni-grpc/gRPC ping-pong, pod → pod on one node/calico=vpc-cni"}; !slices.Equal(same, want) {
		t.Errorf("same-path rows %q, want %q", same, want)
	}
	line := Source{Author: "A", Title: "T", Publisher: "P", Date: "2020", URL: "https://x", ID: "bug 1"}.Line()
	if line != `A, "T", P, 2020: https://x (bug 1)` {
		t.Errorf("line %q", line)
	}
	if line := (Source{Title: "T", ID: "repo x"}).Line(); line != `"T": repo x (publisher and date not recorded)` {
		t.Errorf("line %q", line)
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func TestParsePublishedRejects(t *testing.T) {
	const src = `"sources":[{"key":"s","title":"T","url":"https://x","states":"it says","checked":"read"}]`
	const tbl = `"metric":"m","unit":"u","kind":"gbps","source":"s"`
	for name, doc := range map[string]string{
		"unknown key":       `{"studies":[{"study":"x",` + src + `,"tables":[{` + tbl + `,"baseline":"a","rows":[{"key":"a","value":1}]}],"extra":1}]}`,
		"no tables":         `{"studies":[{"study":"x",` + src + `,"tables":[]}]}`,
		"no source":         `{"studies":[{"study":"x",` + src + `,"tables":[{"metric":"m","unit":"u","kind":"gbps","baseline":"a","rows":[{"key":"a","value":1}]}]}]}`,
		"unknown source":    `{"studies":[{"study":"x",` + src + `,"tables":[{"metric":"m","unit":"u","kind":"gbps","source":"z","baseline":"a","rows":[{"key":"a","value":1}]}]}]}`,
		"source and why":    `{"studies":[{"study":"x",` + src + `,"tables":[{` + tbl + `,"unsourced":"lost","baseline":"a","rows":[{"key":"a","value":1}]}]}]}`,
		"source no title":   `{"studies":[{"study":"x","sources":[{"key":"s","url":"u","states":"x","checked":"y"}],"tables":[{` + tbl + `,"baseline":"a","rows":[{"key":"a","value":1}]}]}]}`,
		"source no states":  `{"studies":[{"study":"x","sources":[{"key":"s","title":"T","url":"u","checked":"y"}],"tables":[{` + tbl + `,"baseline":"a","rows":[{"key":"a","value":1}]}]}]}`,
		"figure unfindable": `{"studies":[{"study":"x","sources":[{"key":"s","title":"T","states":"x","checked":"y"}],"tables":[{` + tbl + `,"baseline":"a","rows":[{"key":"a","value":1}]}]}]}`,
		"bad baseline":      `{"studies":[{"study":"x",` + src + `,"tables":[{` + tbl + `,"baseline":"z","rows":[{"key":"a","value":1}]}]}]}`,
		"bad ordering":      `{"studies":[{"study":"x",` + src + `,"tables":[{` + tbl + `,"baseline":"a","rows":[{"key":"a","value":1}],"orderings":[["a","b"]]}]}]}`,
		"bad about":         `{"studies":[{"study":"x",` + src + `,"tables":[{` + tbl + `,"baseline":"a","rows":[{"key":"a","value":1}],"about":[["a","a"]]}]}]}`,
		"bad same path":     `{"studies":[{"study":"x",` + src + `,"tables":[{` + tbl + `,"baseline":"a","rows":[{"key":"a","value":1,"same_path_as":"b"}]}]}]}`,
		"zero value":        `{"studies":[{"study":"x",` + src + `,"tables":[{` + tbl + `,"baseline":"a","rows":[{"key":"a","value":0}]}]}]}`,
		"unknown kind":      `{"studies":[{"study":"x",` + src + `,"tables":[{"metric":"m","unit":"u","kind":"nope","source":"s","baseline":"a","rows":[{"key":"a","value":1}]}]}]}`,
		"sweep measure":     `{"studies":[{"study":"x",` + src + `,"tables":[{"metric":"m","unit":"u","kind":"rps_ratio","source":"s","baseline":"a","rows":[{"key":"a","measure":"nginx"}]}]}]}`,
	} {
		if _, err := parsePublished([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// An ordering-only table may come from a source with no address; an
	// unsourced table says why.
	for name, doc := range map[string]string{
		"ordering only": `{"studies":[{"study":"x","sources":[{"key":"s","title":"T","states":"x","checked":"y"}],"tables":[{` + tbl + `,"baseline":"a","rows":[{"key":"a"},{"key":"b"}],"orderings":[["a","b"]]}]}]}`,
		"unsourced":     `{"studies":[{"study":"x","sources":[],"tables":[{"metric":"m","unit":"u","kind":"gbps","unsourced":"the write-up is lost","baseline":"a","rows":[{"key":"a","value":1}]}]}]}`,
	} {
		if _, err := parsePublished([]byte(doc)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// argValue is the value after flag in args.
func argValue(args []string, flag string) string {
	if i := slices.Index(args, flag); i >= 0 && i+1 < len(args) {
		return args[i+1]
	}
	return ""
}

// TestPlans: each study's plan is its method, and every published row it
// measures is measured by the plan.
func TestPlans(t *testing.T) {
	for _, c := range []struct {
		study string
		want  map[string]string // flag → value in the one step
		cmd   string
	}{
		{"cni-matrix", map[string]string{"--modes": "host-gw,vxlan,bridge,macvlan,ebpf,udp,ipip,geneve", "--protocols": "tcp-rr,tcp-crr,tcp-stream",
			"--size": "1KiB", "--stream-size": "1KiB", "--ladder": "c1t1", "-d": "1m0s", "--repeats": ""}, "lab"},
		{"flannel-backends", map[string]string{"--modes": "host-gw,vxlan,udp", "--paths": "node-node,pod-pod-other-node", "--protocols": "tcp-stream",
			"--ladder": "c1t1", "-d": "10s", "--repeats": "3"}, "lab"},
		{"vpc-cni-grpc", map[string]string{"--modes": "host-gw,ipip,vxlan", "--paths": "pod-pod-same-node,pod-pod-other-node", "--protocols": "grpc-stream",
			"--ladder": "c1t1", "-d": "30s", "--repeats": "3"}, "lab"},
		{"nginx-sizing", map[string]string{"--workers": "1,2,4,8,16,32,36", "--payload": "1KiB", "--key-type": "rsa", "-d": "3m0s", "--repeats": ""}, "size"},
		{"mesh-ladder", map[string]string{"--ladder": "c1t1..c128t128", "--payloads": "100,1MiB", "-d": "30s", "--path": "baseline=sidecar:none", "--repeats": ""}, "sweep"},
	} {
		s, err := Lookup(c.study)
		if err != nil {
			t.Fatal(err)
		}
		plan := s.Plan(Options{CPUs: 36})
		if len(plan) != 1 || plan[0].Args[0] != c.cmd || plan[0].Dir == "" {
			t.Fatalf("%s: plan %+v", c.study, plan)
		}
		args := plan[0].Args
		for fl, v := range c.want {
			if got := argValue(args, fl); got != v {
				t.Errorf("%s: %s %q, want %q (%v)", c.study, fl, got, v, args)
			}
		}
		if got := argValue(s.Plan(Options{Duration: time.Second, CPUs: 2})[0].Args, "-d"); got != "1s" {
			t.Errorf("%s: -d 1s gives %q", c.study, got)
		}
		if got := argValue(s.Plan(Options{Repeats: 5, CPUs: 2})[0].Args, "--repeats"); got != "5" {
			t.Errorf("%s: --repeats 5 gives %q", c.study, got)
		}
		p, ok, err := s.Published()
		if err != nil || !ok {
			t.Fatalf("%s: published %v %v", c.study, ok, err)
		}
		modes, paths := strings.Split(argValue(args, "--modes"), ","), strings.Split(argValue(args, "--paths"), ",")
		for _, tb := range p.Tables {
			for _, r := range tb.Rows {
				if r.Measure == "" || c.cmd != "lab" {
					continue
				}
				mode, path := report.SplitModePath(r.Measure)
				if !slices.Contains(modes, mode) || (argValue(args, "--paths") != "" && !slices.Contains(paths, path)) {
					t.Errorf("%s: row %s is measured as %s, which the plan does not run", c.study, r.Key, r.Measure)
				}
			}
		}
	}
	if _, err := Lookup("nosuch"); err == nil || !strings.Contains(err.Error(), "cni-matrix") {
		t.Errorf("Lookup(nosuch) = %v", err)
	}
	for cpus, want := range map[int]string{1: "1", 2: "1,2", 6: "1,2,4,6", 8: "1,2,4,8", 0: "1"} {
		if got := workerLadder(cpus); got != want {
			t.Errorf("workerLadder(%d) = %q, want %q", cpus, got, want)
		}
	}
}

// labStep is a made-up lab step: a path's figure at c1t1, repeat i.
func labStep(path, proto string, i int, v float64) *results.Step {
	run := &results.Run{Config: results.Config{Protocol: proto}}
	switch proto {
	case "tcp-stream":
		run.Summary.WritePerSec = v * 1e9 / 8
	case "tcp-rr", "tcp-crr":
		run.Summary.Latency.Mean = results.Duration(v * 1e3)
	case "grpc-stream":
		run.Summary.RPS = v / 2
	}
	return &results.Step{Path: path, Rung: "c1t1", Connections: 1, Threads: 1, Payload: 1024, Repeat: i, Run: run}
}

// labSweep is a made-up lab sweep: path → its figure in each repeat.
func labSweep(root, proto string, figs map[string][]float64) *report.Sweep {
	s := &report.Sweep{Name: filepath.Join(root, "lab", proto), Manifest: &results.Manifest{}}
	for _, path := range slices.Sorted(maps.Keys(figs)) {
		for i, v := range figs[path] {
			s.Steps = append(s.Steps, labStep(path, proto, i, v))
		}
	}
	return s
}

// sizeSweep is a made-up size sweep: workers → keep-alive req/s and TLS
// handshakes/s, one repeat each.
func sizeSweep(root string, figs map[int][2]float64) *report.Sweep {
	s := &report.Sweep{Name: filepath.Join(root, "size"), Manifest: &results.Manifest{}}
	for _, w := range slices.Sorted(maps.Keys(figs)) {
		path := fmt.Sprintf("nginx-%d", w)
		ka := &results.Run{Summary: results.Summary{RPS: figs[w][0]}}
		tls := &results.Run{Config: results.Config{NewConn: true, TLS: true},
			Summary: results.Summary{Duration: results.Duration(time.Second), Connections: results.Connections{Measured: int64(figs[w][1])}}}
		s.Steps = append(s.Steps, &results.Step{Path: path, Rung: "c8t2", Connections: 8, Payload: 1024, Workers: w, Run: ka},
			&results.Step{Path: path + "-tls", Rung: "c8t2", Connections: 8, Payload: 1024, Workers: w, Run: tls})
	}
	return s
}

// TestCompare: ratios to the baseline row and what the orderings come to,
// on figures made up for the test.
func TestCompare(t *testing.T) {
	root := "/r"
	m := measuredFrom(root, []*report.Sweep{
		labSweep(root, "tcp-stream", map[string][]float64{
			"host-gw.node-node":          {15, 15.2, 14.9},
			"host-gw.pod-pod-other-node": {12, 12.1, 11.8},
			"vxlan.pod-pod-other-node":   {10, 10.4, 9.9},
			// udp not measured: its ordering says so.
		}),
		labSweep(root, "tcp-rr", map[string][]float64{"host-gw.node-node": {40, 41, 39}, "host-gw.pod-pod-other-node": {50, 52, 49}}),
		sizeSweep(root, map[int][2]float64{1: {20000, 900}, 2: {35000, 1700}}),
	})
	var b bytes.Buffer
	for _, st := range []string{"flannel-backends", "nginx-sizing"} {
		p, _, _ := PublishedFor(st)
		for _, tb := range p.Tables {
			if err := Compare(p, tb, m).Write(&b); err != nil {
				t.Fatal(err)
			}
			b.WriteString("\n")
		}
	}
	golden(t, "compare.txt", b.Bytes())
	out := b.String()
	for _, want := range []string{
		`source: Ton Ngo, "Flannel overlay performance", OpenStack Magnum's bug tracker on Launchpad, 2015 (presented at the OpenStack Tokyo Summit, 2015): https://bugs.launchpad.net/magnum/+bug/1518605 (Magnum bug #1518605)`,
		"vxlan below host-gw on pod-to-pod bandwidth across nodes (TCP stream): holds (0.83 here, 0.28 published; 3 repeats, their ranges apart)",
		"udp below vxlan on pod-to-pod bandwidth across nodes (TCP stream): not measured here (0.23 published)",
		"1 below 2 on requests/s, 1 KB, keep-alive: noise cannot be told, one repeat (0.57 here, 0.56 published; --repeats 3 to judge)",
		"2 below 4 on requests/s, 1 KB, keep-alive: not measured here (0.59 published)",
		"   direct       9.39     15.00  14.90–15.20 ×3",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	p, _, _ := PublishedFor("flannel-backends")
	tb := Compare(p, p.Tables[0], m)
	if r := tb.Rows[2]; r.Key != "host-gw" || !r.HasMRatio || r.MeasRatio != 12.0/15 || r.PubRatio != 6.0/9.39 || !sameFigure(r.Measured, fig(12, 11.8, 12.1, 3)) {
		t.Errorf("host-gw row %+v", r)
	}
	// A measured figure that breaks the published order, beyond noise;
	// one within it.
	m = measuredFrom(root, []*report.Sweep{labSweep(root, "tcp-stream", map[string][]float64{
		"host-gw.node-node": {15, 15.2, 14.9}, "host-gw.pod-pod-other-node": {12, 12.1, 11.8},
		"vxlan.pod-pod-other-node": {13, 13.2, 12.9}, "udp.pod-pod-other-node": {12.8, 13.1, 12.95}})})
	vs := Compare(p, p.Tables[0], m).Verdicts
	if vs[1].Outcome != Reversed || !strings.Contains(vs[1].Line("x"), ": reversed (1.08 here, 0.28 published; 3 repeats") {
		t.Errorf("verdict %+v: %s", vs[1], vs[1].Line("x"))
	}
	if vs[2].Outcome != WithinNoise || !strings.Contains(vs[2].Line("x"), ": within noise (") {
		t.Errorf("verdict %+v: %s", vs[2], vs[2].Line("x"))
	}
}

// Judge: holds, reversed and within noise by the repeats' ranges against
// the gap; one repeat cannot tell noise; pairs the study found about the
// same hold within noise.
func TestJudge(t *testing.T) {
	f := fig
	for _, c := range []struct {
		name  string
		a, b  Figure
		about bool
		want  Outcome
	}{
		{"apart, in order", f(10, 9.8, 10.1, 3), f(12, 11.9, 12.2, 3), false, Holds},
		{"apart, reversed", f(12, 11.9, 12.2, 3), f(10, 9.8, 10.1, 3), false, Reversed},
		{"medians in order, ranges overlap", f(10, 9, 11.5, 3), f(11, 10.5, 12, 3), false, WithinNoise},
		{"medians reversed, ranges overlap", f(11, 10.5, 12, 3), f(10, 9, 11.5, 3), false, WithinNoise},
		{"a gap of 1.8%, ranges of 3%", f(10700, 10600, 10900, 5), f(10900, 10750, 11050, 5), false, WithinNoise},
		{"touching ranges are not apart", f(10, 9, 11, 3), f(12, 11, 13, 3), false, WithinNoise},
		{"no spread, apart", f(10, 10, 10, 2), f(11, 11, 11, 2), false, Holds},
		{"one repeat of a", f(10, 10, 10, 1), f(12, 11.9, 12.2, 3), false, NoiseUnknown},
		{"one repeat of b", f(10, 9.8, 10.1, 3), f(20, 20, 20, 1), false, NoiseUnknown},
		{"one repeat each, far apart", f(1, 1, 1, 1), f(100, 100, 100, 1), false, NoiseUnknown},
		{"not measured", Figure{}, f(12, 11.9, 12.2, 3), false, NotMeasured},
		{"about, ranges overlap", f(0.99, 0.97, 1.01, 3), f(1, 1, 1, 3), true, Holds},
		{"about, apart", f(0.8, 0.78, 0.82, 3), f(1, 1, 1, 3), true, Differs},
		{"about, one repeat", f(0.99, 0.99, 0.99, 1), f(1, 1, 1, 1), true, NoiseUnknown},
	} {
		if got := Judge(c.a, c.b, c.about); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// Rows that are one datapath here (marked in the data) are not judged,
// whatever the figures; the other ordering of the table is.
func TestNotDistinguishable(t *testing.T) {
	root := "/r"
	m := measuredFrom(root, []*report.Sweep{labSweep(root, "grpc-stream", map[string][]float64{
		"host-gw.pod-pod-same-node": {30000, 30100, 29900}, "ipip.pod-pod-same-node": {20000, 20100, 19900},
		"vxlan.pod-pod-same-node": {25000, 25100, 24900}})})
	p, _, _ := PublishedFor("vpc-cni-grpc")
	tb := Compare(p, p.Tables[0], m)
	if v := tb.Verdicts[0]; v.Outcome != NotDistinguishable ||
		v.Line(tb.Metric) != "calico below vpc-cni on gRPC ping-pong, pod → pod on one node: not distinguishable here: one datapath on this machine (0.98 published)" {
		t.Errorf("calico below vpc-cni: %+v\n%s", v, v.Line(tb.Metric))
	}
	if v := tb.Verdicts[1]; v.Outcome != Reversed {
		t.Errorf("weave below calico: %+v", v)
	}
	if tb := Compare(p, p.Tables[1], m); tb.Verdicts[0].Outcome != NotMeasured {
		t.Errorf("across two nodes: %+v", tb.Verdicts[0])
	}
}

// sidecarStep is a made-up step of mesh-ladder's sweep: a path at a
// payload and rung, its requests/s, median latency and watched proxies.
func sidecarStep(path string, payload, conns, i int, rps, p50ms float64, proxies ...results.ProcessCost) *results.Step {
	run := &results.Run{Summary: results.Summary{RPS: rps, Latency: results.Latency{P50: results.Duration(p50ms * float64(time.Millisecond))}}}
	return &results.Step{Path: path, Baseline: path == "baseline" || path == "direct", Rung: fmt.Sprintf("c%dt%d", conns, conns),
		Connections: conns, Payload: payload, Repeat: i, Run: run, Watched: proxies}
}

// mesh-ladder's tables read the sweep's paths at their payload and rung:
// the proxies' CPU and memory, ratios and differences to the baseline
// path, on the local sweep and on a cluster's k8s runs.
func TestMeshLadderMeasured(t *testing.T) {
	root := "/r"
	local := &report.Sweep{Name: root + "/sweep", Manifest: &results.Manifest{Baseline: "baseline"}}
	istio := &report.Sweep{Name: root + "/k8s-istio", Manifest: &results.Manifest{Baseline: "direct"}}
	linkerd := &report.Sweep{Name: root + "/k8s-linkerd", Manifest: &results.Manifest{Baseline: "direct"}}
	// HAProxy through loadgen's sidecar mesh on a cluster, not locally.
	haproxy := &report.Sweep{Name: root + "/k8s-sidecar-haproxy", Manifest: &results.Manifest{Baseline: "direct"}}
	for i := range 3 {
		d := float64(i) / 100
		proxy := results.ProcessCost{Role: "proxy", CPUPer1kRPS: 0.5 + d, MemMean: 8 << 20, MemMax: 10 << 20}
		target := results.ProcessCost{Role: "target", CPUPer1kRPS: 9}
		local.Steps = append(local.Steps,
			sidecarStep("baseline", 100, 1, i, 20000, 0.05+d),
			sidecarStep("baseline", 100, 16, i, 100000, 0.16+d),
			sidecarStep("nginx", 100, 1, i, 9000, 0.11+d, proxy, target),
			sidecarStep("nginx", 100, 16, i, 50000, 0.30+d, proxy, target),
			sidecarStep("baseline", 1<<20, 16, i, 1000, 15+d),
			sidecarStep("nginx", 1<<20, 16, i, 990, 15.1+d, proxy))
		istio.Steps = append(istio.Steps,
			sidecarStep("direct", 100, 1, i, 20000, 0.06),
			sidecarStep("mesh", 100, 1, i, 5000, 0.26+d, proxy, proxy),
			sidecarStep("direct", 100, 16, i, 90000, 0.18),
			sidecarStep("mesh", 100, 16, i, 40000, 0.40+d, proxy, proxy))
		client := results.ProcessCost{Role: "proxy", Side: "client", CPUPer1kRPS: 0.1, MemMean: 4 << 20}
		server := results.ProcessCost{Role: "proxy", Side: "server", CPUPer1kRPS: 0.2 + d, MemMean: 6 << 20}
		haproxy.Steps = append(haproxy.Steps,
			sidecarStep("direct", 100, 1, i, 20000, 0.06),
			sidecarStep("mesh", 100, 1, i, 10000, 0.16+d, client, server),
			sidecarStep("direct", 100, 16, i, 90000, 0.18),
			sidecarStep("mesh", 100, 16, i, 45000, 0.30+d, client, server))
		linkerd.Steps = append(linkerd.Steps,
			sidecarStep("direct", 100, 1, i, 20000, 0.06),
			sidecarStep("mesh", 100, 1, i, 12000, 0.12+d, results.ProcessCost{Role: "proxy", CPUPer1kRPS: 0.2, MemMax: 30 << 20}),
			sidecarStep("direct", 100, 16, i, 90000, 0.18),
			sidecarStep("mesh", 100, 16, i, 60000, 0.25+d, results.ProcessCost{Role: "proxy", CPUPer1kRPS: 0.2 + d, MemMax: 30 << 20}))
	}
	m := measuredFrom(root, []*report.Sweep{istio, linkerd, local, haproxy})
	p, _, _ := PublishedFor("mesh-ladder")
	table := func(metric string, source string) PublishedTable {
		for _, tb := range p.Tables {
			if tb.Metric == metric && tb.Source == source {
				return tb
			}
		}
		t.Fatalf("no table %q of %s", metric, source)
		return PublishedTable{}
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for _, c := range []struct {
		metric, source, row string
		want                Figure
	}{
		// nginx's both sidecars at c16t16: 0.50, 0.51, 0.52 vCPU per 1k.
		{"proxy CPU per 1,000 requests/s, 100 B at c16t16 (lower is better)", "istio-1.24", "nginx", fig(0.51, 0.5, 0.52, 3)},
		// HAProxy's row, not run locally: its cluster run's two sides, summed.
		{"proxy CPU per 1,000 requests/s, 100 B at c16t16 (lower is better)", "istio-1.24", "haproxy", fig(0.31, 0.3, 0.32, 3)},
		{"proxy memory, 100 B at c16t16 (lower is better)", "istio-1.24", "haproxy", fig(10, 10, 10, 3)},
		{"median latency added over no mesh, 100 B at c1t1 (lower is better)", "linkerd-2021", "haproxy", fig(0.11, 0.10, 0.12, 3)},
		// Istio's two sidecars, summed.
		{"proxy CPU per 1,000 requests/s, 100 B at c16t16 (lower is better)", "istio-1.24", "istio-sidecar", fig(1.02, 1, 1.04, 3)},
		{"proxy memory, 100 B at c16t16 (lower is better)", "istio-1.24", "istio-sidecar", fig(16, 16, 16, 3)},
		{"a proxy's peak memory (lower is better)", "linkerd-2021", "linkerd", fig(30, 30, 30, 3)},
		// Median latency added at c1t1: 0.26..0.28 ms less 0.06.
		{"median latency added over no mesh, 100 B at c1t1 (lower is better)", "linkerd-2021", "istio", fig(0.21, 0.20, 0.22, 3)},
		{"median latency added over no mesh, 100 B at c1t1 (lower is better)", "linkerd-2021", "nginx", fig(0.06, 0.04, 0.08, 3)},
		{"throughput, 100 B at c16t16, as a ratio to no mesh", "appmesh-study", "nginx", fig(0.5, 0.5, 0.5, 3)},
		{"throughput, 100 B at c16t16, as a ratio to no mesh", "appmesh-study", "baseline", fig(1, 1, 1, 3)},
		{"throughput, 1 MB at c16t16, as a ratio to no mesh", "appmesh-study", "nginx", fig(0.99, 0.99, 0.99, 3)},
		{"median latency, 1 MB at c16t16, as a ratio to no mesh (lower is better)", "appmesh-study", "nginx", fig(15.11/15.01, 15.1/15.02, 15.12/15, 3)},
	} {
		tb := table(c.metric, c.source)
		i := slices.IndexFunc(tb.Rows, func(r PublishedRow) bool { return r.Key == c.row })
		got, ok := m.Value(tb, tb.Rows[i].Measure)
		if !ok || !near(got.Value, c.want.Value) || !near(got.Min, c.want.Min) || !near(got.Max, c.want.Max) || got.N != c.want.N {
			t.Errorf("%s [%s], %s: %+v %v, want %+v", c.metric, c.source, c.row, got, ok, c.want)
		}
	}
	// Linkerd below Istio on added latency holds on these figures; the
	// study's 1 MB "about the baseline" holds for nginx's figures within
	// noise; App Mesh was not run.
	tb := Compare(p, table("median latency added over no mesh, 100 B at c1t1 (lower is better)", "linkerd-2021"), m)
	if v := tb.Verdicts[0]; v.Outcome != Holds {
		t.Errorf("linkerd below istio: %s", v.Line(tb.Metric))
	}
	tb = Compare(p, table("throughput, 1 MB at c16t16, as a ratio to no mesh", "appmesh-study"), m)
	if v := tb.Verdicts[0]; v.Outcome != NotMeasured || !strings.Contains(v.Line(tb.Metric), "(published as about the same)") {
		t.Errorf("istio about baseline: %s", v.Line(tb.Metric))
	}
	// Every cluster row names a directory a k8s run of the study writes,
	// and every local row the sweep's.
	ml, _ := Lookup("mesh-ladder")
	dirs := map[string]bool{}
	for _, st := range ml.Plan(Options{}) {
		dirs[st.Dir] = true
	}
	for _, tb := range p.Tables {
		for _, r := range tb.Rows {
			for _, alt := range strings.Split(r.Measure, "|") {
				dir, _, ok := strings.Cut(alt, ":")
				if !ok {
					continue
				}
				if mesh, cluster := strings.CutPrefix(dir, "k8s-"); cluster {
					mesh = strings.Replace(mesh, SidecarMesh+"-", SidecarMesh+":", 1)
					if plan := ml.Plan(Options{Kubeconfig: "/k", Meshes: []string{mesh}}); plan[0].Dir != dir {
						t.Errorf("row %s measured in %s: a cluster run writes %s", r.Key, dir, plan[0].Dir)
					}
				} else if !dirs[dir] {
					t.Errorf("row %s measured in %s, which the plan does not write", r.Key, dir)
				}
			}
		}
	}
}

// No output calls a figure published without its source: the table
// printed (loadgen study) carries a source line naming every source of its
// figures, and the report's tables (loadgen report) their study's sources;
// a table whose source cannot be named says unsourced, never published,
// and is left out of the report.
func TestSourceInEveryOutput(t *testing.T) {
	root := "/r"
	m := measuredFrom(root, []*report.Sweep{labSweep(root, "tcp-stream", map[string][]float64{"host-gw.node-node": {15, 15.1}})})
	for _, s := range All() {
		p, ok, _ := s.Published()
		if !ok {
			continue
		}
		line, several := SourcesLine(p)
		for _, tb := range p.Tables {
			ct := Compare(p, tb, m)
			var b bytes.Buffer
			if err := ct.Write(&b); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			if !strings.Contains(out, "published") {
				t.Errorf("%s, %s: no published column", s.Name, tb.Metric)
			}
			for _, src := range p.TableSources(tb) {
				if !strings.Contains(out, src.Line()) || !strings.Contains(out, `"`+src.Title+`"`) {
					t.Errorf("%s, %s: no source line for %s:\n%s", s.Name, tb.Metric, src.Key, out)
				}
			}
			if !strings.HasPrefix(strings.Split(out, "\n")[1], "source: ") {
				t.Errorf("%s, %s: the line under the title is not its source:\n%s", s.Name, tb.Metric, out)
			}
			rp := ct.Report(s, line, several)
			for _, src := range p.TableSources(tb) {
				if !strings.Contains(rp.Source, src.Line()) {
					t.Errorf("%s, %s: the report's source %q lacks %s", s.Name, tb.Metric, rp.Source, src.Key)
				}
			}
		}
	}
	// An unsourced table, made up: marked in the text, left out of the report.
	doc := `{"studies":[{"study":"x","sources":[{"key":"s","title":"T","url":"https://x","states":"it says","checked":"read"}],"tables":[
		{"metric":"lost","unit":"Gbit/s","kind":"gbps","unsourced":"the write-up is lost","baseline":"a","rows":[{"key":"a","value":2,"measure":"host-gw.node-node"},{"key":"b","value":1}],"orderings":[["b","a"]]},
		{"metric":"kept","unit":"Gbit/s","kind":"gbps","source":"s","baseline":"a","rows":[{"key":"a","value":2,"measure":"host-gw.node-node"}]}]}]}`
	pubs, err := parsePublished([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	p := pubs["x"]
	var b bytes.Buffer
	if err := Compare(p, p.Tables[0], m).Write(&b); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.Contains(out, "published") || !strings.Contains(out, "unsourced: the write-up is lost") ||
		!strings.Contains(out, "row  unsourced  measured") || !strings.Contains(out, "(0.50 unsourced)") {
		t.Errorf("unsourced table:\n%s", out)
	}
	tables := reportTables(Study{Name: "x"}, p, m)
	if len(tables) != 1 || tables[0].Metric != "kept" || tables[0].Source != `"T": https://x (publisher and date not recorded)` {
		t.Errorf("report tables %+v", tables)
	}
}

// k8s-paths: one step of loadgen k8s paths, k8s-netperf's defaults, the
// cluster options passed on; it needs a cluster whatever the options.
func TestPlanK8sPaths(t *testing.T) {
	s, err := Lookup("k8s-paths")
	if err != nil {
		t.Fatal(err)
	}
	if !s.Cluster || s.NeedsText() != "a Kubernetes cluster" || s.NeedsTextFor(Options{}) != "a Kubernetes cluster" || s.Ours == "" {
		t.Errorf("needs %q, cluster %v, ours %q", s.NeedsText(), s.Cluster, s.Ours)
	}
	plan := s.Plan(Options{})
	if len(plan) != 1 || !plan[0].Whole || plan[0].Dir != "k8s-paths" {
		t.Fatalf("plan %+v", plan)
	}
	if got := strings.Join(plan[0].Args, " "); got != "k8s paths -n loadgen-paths -d 10s --repeats 3 --tolerance 10%" {
		t.Errorf("default args %q", got)
	}
	args := s.Plan(Options{Duration: 2 * time.Second, Repeats: 2, Tolerance: "25%", Kubeconfig: "/k", Context: "c", Image: "i:1"})[0].Args
	for fl, want := range map[string]string{"-d": "2s", "--repeats": "2", "--tolerance": "25%", "--kubeconfig": "/k", "--context": "c", "--image": "i:1"} {
		if got := argValue(args, fl); got != want {
			t.Errorf("%s %q, want %q (%v)", fl, got, want, args)
		}
	}
	if p, ok, err := s.Published(); ok || err != nil {
		t.Errorf("k8s-paths has published figures? %+v %v", p, err)
	}
	// mesh-ladder keeps its text, and passes --image on to k8s run.
	ml, _ := Lookup("mesh-ladder")
	if ml.NeedsText() != "root, nginx (or a cluster: --kubeconfig)" {
		t.Errorf("mesh-ladder needs %q", ml.NeedsText())
	}
	if a := ml.Plan(Options{Kubeconfig: "/k", Image: "i:1"})[0].Args; argValue(a, "--image") != "i:1" || argValue(a, "--kubeconfig") != "/k" {
		t.Errorf("mesh-ladder on a cluster: %v", a)
	}
}

// flannel-backends on a cluster: a k8s paths step per backend, each
// refusing a cluster that runs another.
func TestFlannelClusterPlan(t *testing.T) {
	s, err := Lookup("flannel-backends")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Kubeconfig: "/k", Image: "img:1", Duration: 3 * time.Second}
	if got := s.NeedsFor(o); !slices.Equal(got, []Need{NeedCluster}) {
		t.Errorf("needs %v", got)
	}
	plan := s.Plan(o)
	if len(plan) != 3 {
		t.Fatalf("plan %+v", plan)
	}
	for i, b := range FlannelBackends {
		st := plan[i]
		if st.Dir != "k8s-"+b || !st.Whole || strings.Join(st.Args[:2], " ") != "k8s paths" || argValue(st.Args, "--flannel-backend") != b ||
			argValue(st.Args, "--paths") != "pod-pod-other-node" || argValue(st.Args, "--tests") != "tcp-stream" ||
			argValue(st.Args, "--stream-size") != "128KiB" || argValue(st.Args, "-d") != "3s" || argValue(st.Args, "--repeats") != "3" ||
			argValue(st.Args, "--kubeconfig") != "/k" || argValue(st.Args, "--image") != "img:1" {
			t.Errorf("step %d: %+v", i, st)
		}
	}
}

// A study directory's k8s paths runs on Flannel read as the lab's paths of
// the backend their nodes ran: the same published rows, measured on a
// cluster, beside the lab's.
func TestClusterMeasured(t *testing.T) {
	dir := t.TempDir()
	write := func(path string, v any) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := store.WriteJSON(filepath.Join(dir, path), v); err != nil {
			t.Fatal(err)
		}
	}
	figs := map[string]map[string][]float64{
		"host-gw": {"host-host-other-node": {10, 10.2, 9.9}, "pod-pod-other-node": {8, 8.1, 7.9}},
		"vxlan":   {"host-host-other-node": {10.1, 10, 9.8}, "pod-pod-other-node": {4, 4.2, 3.9}},
	}
	for b, paths := range figs {
		write("k8s-"+b+"/paths.json", map[string]any{"kind": "k8s-paths", "flannel_backend": b})
		m := results.Manifest{Schema: results.SchemaVersion, Tool: "loadgen", Kind: "sweep", Baseline: "host-host"}
		for _, p := range slices.Sorted(maps.Keys(paths)) {
			for i, v := range paths[p] {
				st := labStep(p, "tcp-stream", i+1, v)
				st.Schema, st.Tool, st.ID = results.SchemaVersion, "loadgen", fmt.Sprintf("%s_c1t1_128KiB_closed_r%d", p, i+1)
				m.Steps = append(m.Steps, st.ID)
				write("k8s-"+b+"/tcp-stream/steps/"+st.ID+".json", st)
			}
		}
		write("k8s-"+b+"/tcp-stream/manifest.json", m)
	}
	// A k8s paths run on no Flannel is not one of the study's.
	write("k8s-other/paths.json", map[string]any{"kind": "k8s-paths"})
	pub, _, _ := PublishedFor("flannel-backends")
	sets, err := MeasuredSets(dir, pub)
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 1 || sets[0].Where != ClusterWhere {
		t.Fatalf("sets %+v: want the cluster's alone (no lab ran)", sets)
	}
	tb := Compare(pub, pub.Tables[0], sets[0].M)
	var b bytes.Buffer
	if err := tb.Write(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"   direct       9.39     10.00  9.90–10.20 ×3             1.00            1.00",
		"  host-gw       6.00      8.00   7.90–8.10 ×3             0.64            0.80",
		"vxlan below host-gw on pod-to-pod bandwidth across nodes (TCP stream): holds (0.50 here, 0.28 published; 3 repeats, their ranges apart)",
		"udp below vxlan on pod-to-pod bandwidth across nodes (TCP stream): not measured here",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// cni-matrix on a cluster is one k8s paths run naming the cluster's
// datapath (--cni), whose rows read as that lab mode's: a Macvlan
// cluster's pod ↔ pod across nodes is the published macvlan row, a
// Flannel cluster's (named by its backend) the vxlan one; a run whose CNI
// is not known is not one of the study's.
func TestCNIClusterPlanAndMeasured(t *testing.T) {
	s, err := Lookup("cni-matrix")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Kubeconfig: "/k", Image: "img:1", Duration: 3 * time.Second, CNI: "macvlan"}
	if got := s.NeedsFor(o); !slices.Equal(got, []Need{NeedCluster}) {
		t.Errorf("needs %v", got)
	}
	plan := s.Plan(o)
	if len(plan) != 1 {
		t.Fatalf("plan %+v", plan)
	}
	st := plan[0]
	if st.Dir != "k8s-macvlan" || !st.Whole || strings.Join(st.Args[:2], " ") != "k8s paths" || argValue(st.Args, "--cni") != "macvlan" ||
		argValue(st.Args, "--tests") != "tcp-stream,tcp-rr,tcp-crr,http" || argValue(st.Args, "-d") != "3s" ||
		argValue(st.Args, "--kubeconfig") != "/k" || argValue(st.Args, "--image") != "img:1" {
		t.Errorf("step %+v", st)
	}
	if st := s.Plan(Options{Kubeconfig: "/k"})[0]; st.Dir != "k8s-cluster" || argValue(st.Args, "--cni") != "" {
		t.Errorf("without --cni: %+v", st)
	}

	dir := t.TempDir()
	write := func(path string, v any) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := store.WriteJSON(filepath.Join(dir, path), v); err != nil {
			t.Fatal(err)
		}
	}
	runs := map[string]struct {
		meta map[string]any
		figs map[string][]float64
	}{
		"macvlan": {map[string]any{"kind": "k8s-paths", "cni": "macvlan"}, map[string][]float64{"host-host-other-node": {10, 10.2, 9.9}, "pod-pod-other-node": {9.5, 9.6, 9.4}}},
		// Its own hostNetwork row measured half the macvlan run's: runs
		// made apart drift, and the ratio to its run's node-node says so.
		"vxlan":   {map[string]any{"kind": "k8s-paths", "flannel_backend": "vxlan"}, map[string][]float64{"host-host-other-node": {5, 5.1, 4.9}, "pod-pod-other-node": {2, 2.1, 1.9}}},
		"unknown": {map[string]any{"kind": "k8s-paths"}, map[string][]float64{"pod-pod-other-node": {50, 50, 50}}},
	}
	for name, r := range runs {
		write("k8s-"+name+"/paths.json", r.meta)
		m := results.Manifest{Schema: results.SchemaVersion, Tool: "loadgen", Kind: "sweep", Baseline: "host-host"}
		for _, p := range slices.Sorted(maps.Keys(r.figs)) {
			for i, v := range r.figs[p] {
				st := labStep(p, "tcp-stream", i+1, v)
				st.Schema, st.Tool, st.ID = results.SchemaVersion, "loadgen", fmt.Sprintf("%s_c1t1_1KiB_closed_r%d", p, i+1)
				m.Steps = append(m.Steps, st.ID)
				write("k8s-"+name+"/tcp-stream/steps/"+st.ID+".json", st)
			}
		}
		write("k8s-"+name+"/tcp-stream/manifest.json", m)
	}
	pub, _, _ := PublishedFor("cni-matrix")
	sets, err := MeasuredSets(dir, pub)
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) != 1 || sets[0].Where != ClusterWhere {
		t.Fatalf("sets %+v: want the cluster's alone", sets)
	}
	var b bytes.Buffer
	if err := Compare(pub, pub.Tables[0], sets[0].M).Write(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"row  published  measured        repeats  published ratio  measured ratio  its run's node-node",
		"node-node       9.16     10.00  9.90–10.20 ×3             1.00            1.00                 1.00", // hostNetwork, from the macvlan run
		"macvlan       9.18      9.50   9.40–9.60 ×3             1.00            0.95                 0.95",
		"calico-vxlan       1.37      2.00   1.90–2.10 ×3             0.15            0.20                 0.40",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "50.00") {
		t.Errorf("a run of no known CNI was read:\n%s", out)
	}
	t.Logf("\n%s", out)
}

// fig is a measured figure with no runs behind it.
func fig(v, lo, hi float64, n int) Figure { return Figure{Value: v, Min: lo, Max: hi, N: n} }

// sameFigure compares figures by their numbers.
func sameFigure(a, b Figure) bool {
	return a.Value == b.Value && a.Min == b.Min && a.Max == b.Max && a.N == b.N
}

// busy marks a made-up lab sweep's runs of path with what the machine
// measured: its 2 CPUs' busy cores, beside a generator that took 0.2 of
// a core over 1 s; saturated as run marks a machine past 90%.
func busy(s *report.Sweep, path string, cores float64) {
	for _, st := range s.Steps {
		if st.Path != path {
			continue
		}
		r := *st.Run
		r.Summary.Duration = results.Duration(time.Second)
		r.Generator.CPUSeconds = 0.2
		r.Machine = &results.MachineCost{CPUs: 2, BusyCores: cores, Utilization: cores / 2, Saturated: cores/2 >= 0.9}
		st.Run = &r
	}
}

// An ordering whose runs measured a saturated machine is not decidable
// when contention can explain it; it still holds (or is reversed) when the
// gap is past what contention can do, and stays as it was without the flag.
func TestCompareContended(t *testing.T) {
	root := "/r"
	p, _, _ := PublishedFor("flannel-backends")
	figs := map[string][]float64{
		"host-gw.node-node":          {15, 15.2, 14.9},
		"host-gw.pod-pod-other-node": {12, 12.1, 11.8},
		"vxlan.pod-pod-other-node":   {10, 10.4, 9.9},
		"udp.pod-pod-other-node":     {2, 2.1, 1.9},
	}
	verdict := func(mark func(s *report.Sweep), lower, higher string) Verdict {
		t.Helper()
		s := labSweep(root, "tcp-stream", figs)
		mark(s)
		tb := Compare(p, p.Tables[0], measuredFrom(root, []*report.Sweep{s}))
		for _, v := range tb.Verdicts {
			if v.Lower == lower && v.Higher == higher {
				return v
			}
		}
		t.Fatalf("no ordering %s below %s", lower, higher)
		return Verdict{}
	}
	quiet := verdict(func(*report.Sweep) {}, "vxlan", "host-gw")
	if quiet.Outcome != Holds || quiet.Contention.Flags != "" {
		t.Fatalf("quiet: %s", quiet.Line("x"))
	}
	// vxlan's runs on a machine whose other work took 1.7 of its 2 CPUs
	// beyond host-gw's: a rate can be 1/(1 − 0.85) ≈ 6.7 times lower, far
	// past the 13% gap between the rows.
	v := verdict(func(s *report.Sweep) {
		busy(s, "vxlan.pod-pod-other-node", 1.9)
		busy(s, "host-gw.pod-pod-other-node", 0.2)
	}, "vxlan", "host-gw")
	if v.Outcome != Contended || !strings.Contains(v.Line("x"), "vxlan below host-gw on x: not decidable (contended): M in vxlan saturated, contention can stretch a figure ×6.67: 85% of the machine's CPUs taken by other work") ||
		!strings.Contains(v.Line("x"), "(0.83 here, 0.28 published; 3 repeats; --allow-contended: exit 0)") {
		t.Errorf("contended: %s", v.Line("x"))
	}
	// Both sides about as busy: 0.05 of the CPUs beyond host-gw's, ×1.05,
	// short of the gap: the ordering holds, contended or not.
	v = verdict(func(s *report.Sweep) {
		busy(s, "vxlan.pod-pod-other-node", 1.9)
		busy(s, "host-gw.pod-pod-other-node", 1.8)
	}, "vxlan", "host-gw")
	if v.Outcome != Holds || v.Contention.Flags != "M in vxlan, M in host-gw" {
		t.Errorf("contended within the gap: %s (%+v)", v.Line("x"), v.Contention)
	}
	// udp five times below vxlan: past ×1.5 of contention, it holds.
	v = verdict(func(s *report.Sweep) {
		busy(s, "udp.pod-pod-other-node", 1.2)
		busy(s, "vxlan.pod-pod-other-node", 1.8)
	}, "udp", "vxlan")
	if v.Outcome != Holds || v.Contention.Factor() < 1.4 {
		t.Errorf("a gap past contention: %s (%+v)", v.Line("x"), v.Contention)
	}
	// A reversed ordering as well: vxlan above host-gw on a busy machine.
	figs["vxlan.pod-pod-other-node"] = []float64{13, 13.2, 12.9}
	v = verdict(func(s *report.Sweep) {
		busy(s, "host-gw.pod-pod-other-node", 1.9)
		busy(s, "vxlan.pod-pod-other-node", 0.2)
	}, "vxlan", "host-gw")
	if v.Outcome != Contended {
		t.Errorf("reversed on a busy machine: %s", v.Line("x"))
	}
}

// widen: a rate may be higher without contention, a latency lower, a
// ratio either; memory not at all, nor a baseline's own ratio.
func TestWiden(t *testing.T) {
	runs := []*results.Run{{}}
	x := Figure{Value: 10, Min: 9, Max: 11, N: 3, Runs: runs, Raw: 4}
	for _, c := range []struct {
		k      Kind
		x      Figure
		lo, hi float64
	}{
		{RPS, x, 9, 22}, {Gbps, x, 9, 22}, {RRus, x, 4.5, 11}, {ProxyCPU, x, 4.5, 11}, {ProxyMem, x, 9, 11},
		{RPSRatio, x, 4.5, 22}, {AddedP50, x, 5, 15}, {RPSRatio, fig(1, 1, 1, 3), 1, 1},
	} {
		if lo, hi := widen(c.k, c.x, 2); math.Abs(lo-c.lo) > 1e-9 || math.Abs(hi-c.hi) > 1e-9 {
			t.Errorf("%s: %g–%g, want %g–%g", c.k, lo, hi, c.lo, c.hi)
		}
	}
}
