package study

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"loadgen/results/report"
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
		fmt.Fprintf(&b, "%s\nsource: %s\n", s.Name, p.Source)
		for _, tb := range p.Tables {
			fmt.Fprintf(&b, "  %s (%s, %s; baseline %s)\n", tb.Metric, tb.Unit, tb.Kind, tb.Baseline)
			for _, r := range tb.Rows {
				fmt.Fprintf(&b, "    %-16s %10g  measured as %q\n", r.Key, r.Value, r.Measure)
			}
			for _, o := range tb.Orderings {
				fmt.Fprintf(&b, "    ordering: %s below %s\n", o[0], o[1])
			}
		}
		b.WriteString("\n")
	}
	golden(t, "published.txt", b.Bytes())

	// The figures issue 12 quotes.
	for _, c := range []struct {
		study, key string
		table      int
		value      float64
	}{
		{"flannel-backends", "direct", 0, 9.39}, {"flannel-backends", "host-gw", 0, 6.0}, {"flannel-backends", "vxlan", 0, 1.71}, {"flannel-backends", "udp", 0, 0.385},
		{"nginx-sizing", "1", 0, 45000}, {"nginx-sizing", "1", 1, 6700}, {"nginx-sizing", "36", 0, 300000}, {"nginx-sizing", "36", 1, 92800},
		{"vpc-cni-grpc", "vpc-cni", 0, 10900}, {"vpc-cni-grpc", "calico", 0, 10700}, {"vpc-cni-grpc", "weave", 0, 10600},
		{"vpc-cni-grpc", "vpc-cni", 1, 3970}, {"vpc-cni-grpc", "calico", 1, 3520}, {"vpc-cni-grpc", "weave", 1, 1900},
	} {
		p, _, _ := PublishedFor(c.study)
		i := slices.IndexFunc(p.Tables[c.table].Rows, func(r PublishedRow) bool { return r.Key == c.key })
		if i < 0 || p.Tables[c.table].Rows[i].Value != c.value {
			t.Errorf("%s table %d row %s: want %g", c.study, c.table, c.key, c.value)
		}
	}
}

func TestParsePublishedRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"unknown key":  `{"studies":[{"study":"x","source":"s","tables":[],"extra":1}]}`,
		"no source":    `{"studies":[{"study":"x","tables":[]}]}`,
		"bad baseline": `{"studies":[{"study":"x","source":"s","tables":[{"metric":"m","unit":"u","kind":"gbps","baseline":"z","rows":[{"key":"a","value":1}]}]}]}`,
		"bad ordering": `{"studies":[{"study":"x","source":"s","tables":[{"metric":"m","unit":"u","kind":"gbps","baseline":"a","rows":[{"key":"a","value":1}],"orderings":[["a","b"]]}]}]}`,
		"zero value":   `{"studies":[{"study":"x","source":"s","tables":[{"metric":"m","unit":"u","kind":"gbps","baseline":"a","rows":[{"key":"a","value":0}]}]}]}`,
	} {
		if _, err := parsePublished([]byte(doc)); err == nil {
			t.Errorf("%s: accepted", name)
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
			"--size": "1KiB", "--stream-size": "1KiB", "--ladder": "c1t1", "-d": "1m0s"}, "lab"},
		{"flannel-backends", map[string]string{"--modes": "host-gw,vxlan,udp", "--paths": "node-node,pod-pod-other-node", "--protocols": "tcp-stream",
			"--ladder": "c1t1", "-d": "10s"}, "lab"},
		{"vpc-cni-grpc", map[string]string{"--modes": "host-gw,ipip,vxlan", "--paths": "pod-pod-same-node,pod-pod-other-node", "--protocols": "grpc-stream",
			"--ladder": "c1t1", "-d": "30s"}, "lab"},
		{"nginx-sizing", map[string]string{"--workers": "1,2,4,8,16,32,36", "--payload": "1KiB", "--key-type": "rsa", "-d": "3m0s"}, "size"},
		{"mesh-ladder", map[string]string{"--ladder": "c1t1..c128t128", "--payloads": "100,1MiB", "-d": "30s", "--path": "baseline=sidecar:none"}, "sweep"},
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
		p, ok, err := s.Published()
		if err != nil || (!ok && c.study != "mesh-ladder") {
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

// TestCompare: ratios to the baseline row and the orderings, on figures
// made up for the test.
func TestCompare(t *testing.T) {
	m := &Measured{cni: map[string]report.CNIRow{
		"host-gw.node-node":          {HasGbps: true, Gbps: 15, HasRR: true, RR: 40e3},
		"host-gw.pod-pod-other-node": {HasGbps: true, Gbps: 12, HasRR: true, RR: 50e3},
		"vxlan.pod-pod-other-node":   {HasGbps: true, Gbps: 10},
		// udp not measured: its ordering says so.
	}, sizing: map[string]report.SizingRow{
		"1": {Workers: 1, HasRPS: true, RPS: 20000, HasTPS: true, TPS: 900},
		"2": {Workers: 2, HasRPS: true, RPS: 35000, HasTPS: true, TPS: 1700},
	}, workers: []int{1, 2}}
	var b bytes.Buffer
	for _, st := range []string{"flannel-backends", "nginx-sizing"} {
		p, _, _ := PublishedFor(st)
		for _, tb := range p.Tables {
			if err := Compare(tb, m).Write(&b); err != nil {
				t.Fatal(err)
			}
			b.WriteString("\n")
		}
	}
	golden(t, "compare.txt", b.Bytes())
	out := b.String()
	for _, want := range []string{
		"vxlan below host-gw on pod-to-pod bandwidth across nodes (TCP stream): holds (0.83 vs 0.28 published)",
		"udp below vxlan on pod-to-pod bandwidth across nodes (TCP stream): not measured here (0.23 published)",
		"1 below 36 on requests/s, 1 KiB, keep-alive: not measured here",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	p, _, _ := PublishedFor("flannel-backends")
	tb := Compare(p.Tables[0], m)
	if r := tb.Rows[1]; !r.HasMRatio || r.MeasRatio != 12.0/15 || r.PubRatio != 6.0/9.39 {
		t.Errorf("host-gw row %+v", r)
	}
	// A measured figure that breaks the published order.
	m.cni["vxlan.pod-pod-other-node"] = report.CNIRow{HasGbps: true, Gbps: 13}
	if v := Compare(p.Tables[0], m).Verdicts[1]; !v.Measured || v.Holds || !strings.Contains(v.Line("x"), "does not hold") {
		t.Errorf("verdict %+v: %s", v, v.Line("x"))
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
