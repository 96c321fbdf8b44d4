package paths

import (
	"bytes"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"loadgen/results"
)

func TestJudge(t *testing.T) {
	for _, tc := range []struct {
		ratio, tol float64
		want       string
	}{
		{1, 0.1, VerdictOK},
		{1.3, 0.1, VerdictOK}, // faster than host is never a failure
		{0.9, 0.1, VerdictOK}, // exactly at the bound
		{0.8999, 0.1, VerdictBelow},
		{0.5, 0.1, VerdictBelow},
		{0.5, 0.5, VerdictOK},
		{0.99, 0, VerdictBelow},
		{1, 0, VerdictOK},
	} {
		if got := Judge(tc.ratio, tc.tol); got != tc.want {
			t.Errorf("Judge(%g, %g) = %s, want %s", tc.ratio, tc.tol, got, tc.want)
		}
	}
}

// TestTabulate checks that with --judge all every pod row is judged against
// its hostNetwork row (the rule before k8s-netperf's became the default).
func TestTabulate(t *testing.T) {
	p, err := planOn(Options{Repeats: 3, Tolerance: 0.1, Judge: JudgeAll}, []string{"n"})
	if err != nil {
		t.Fatal(err)
	}
	p.Tests = p.Tests[1:2] // tcp-rr
	rr := func(path string, figs ...float64) []Sample {
		var out []Sample
		for i, f := range figs {
			s := Sample{Path: path, Test: TestTCPRR, Repeat: i + 1, Figure: f}
			if f < 0 {
				s.Figure, s.Failed = 0, "no request succeeded"
			}
			out = append(out, s)
		}
		return out
	}
	samples := slices.Concat(rr(HostHost, 100, 90, 110), rr(PodPodSameNode, 95, 70, 85), rr(PodClusterIP, 60, 80, -1),
		rr(PodNodePort, -1, -1, -1))
	rows := Tabulate(p, samples)
	if len(rows) != 7 {
		t.Fatalf("%d rows", len(rows))
	}
	by := map[string]Row{}
	for _, r := range rows {
		by[r.Path] = r
	}
	near := func(p *float64, want float64) bool { return p != nil && math.Abs(*p-want) < 1e-9 }
	host := by[HostHost]
	if host.Verdict != VerdictBaseline || !near(host.Median, 100) || !near(host.Min, 90) || !near(host.Max, 110) ||
		!near(host.Spread, 0.2) || host.Ratio != nil || !slices.Equal(host.Figures, []float64{100, 90, 110}) {
		t.Errorf("host row %+v", host)
	}
	pod := by[PodPodSameNode]
	// 85 of 100: below 90%.
	if pod.Verdict != VerdictBelow || !near(pod.Median, 85) || !near(pod.Ratio, 0.85) || !near(pod.RatioMin, 0.7) || !near(pod.RatioMax, 0.95) || pod.Baseline != HostHost {
		t.Errorf("pod row %+v", pod)
	}
	svc := by[PodClusterIP]
	if svc.Verdict != VerdictBelow || !near(svc.Median, 70) || len(svc.Failures) != 1 || !strings.Contains(svc.Failures[0], "repeat 3: no request succeeded") {
		t.Errorf("service row %+v", svc)
	}
	np := by[PodNodePort]
	if np.Verdict != VerdictFailed || np.Median != nil || np.Ratio != nil || len(np.Failures) != 3 || np.Figures == nil {
		t.Errorf("nodeport row %+v", np)
	}
	if other := by[PodPodOtherNode]; other.Verdict != VerdictNotMeasurable || other.Note != NotMeasurableOneNode {
		t.Errorf("cross-node row %+v", other)
	}
	if Passed(rows) {
		t.Error("rows below the tolerance passed")
	}

	// Within the tolerance, everything measured: passed; a host row that
	// failed leaves its pod rows without a ratio, which fails.
	good := Tabulate(p, slices.Concat(rr(HostHost, 100, 100, 100), rr(PodPodSameNode, 95, 91, 99),
		rr(PodClusterIP, 90, 90, 90), rr(PodNodePort, 120, 100, 101)))
	if !Passed(good) {
		t.Errorf("within tolerance, not passed: %+v", good)
	}
	nobase := Tabulate(p, slices.Concat(rr(HostHost, -1, -1, -1), rr(PodPodSameNode, 95, 91, 99)))
	if nobase[1].Verdict != VerdictNoBaseline || nobase[2].Verdict != VerdictNotRun || Passed(nobase) {
		t.Errorf("no baseline: %+v", nobase[:3])
	}
}

func TestFigure(t *testing.T) {
	run := &results.Run{Summary: results.Summary{Requests: 1000, Duration: results.Duration(2 * time.Second), WritePerSec: 125e6,
		Errors: results.Errors{Status: 100}}, Generator: results.Cost{Saturated: true}}
	if got := Figure(TestTCPStream, run); got != 1 {
		t.Errorf("stream: %g Gbit/s, want 1", got)
	}
	udp := *run
	udp.Summary.Datagrams = &results.Datagrams{Sent: 200, Received: 100, ReceivedBytes: 250e6, Lost: 100, Span: results.Duration(4 * time.Second)}
	if got := Figure(TestUDPStream, &udp); got != 0.5 {
		t.Errorf("udp stream: %g Gbit/s, want 0.5, what the sink received", got)
	}
	if got := Figure(TestHTTP, run); got != 450 {
		t.Errorf("http: %g req/s, want 450 (errors are not throughput)", got)
	}
	m := Measurement{Repeat: 2, Path: PathSpec{Name: PodClusterIP}, Test: Tests[3]}
	if s := SampleOf(m, &results.Step{Run: run}); s.Failed != "" || s.Figure != 450 || !s.GeneratorSaturated || s.MachineSaturated || s.Repeat != 2 {
		t.Errorf("sample %+v", s)
	}
	if s := SampleOf(m, &results.Step{Failed: "worker 0 (pod p) failed: exit code 1"}); !strings.Contains(s.Failed, "exit code 1") || s.Figure != 0 {
		t.Errorf("failed sample %+v", s)
	}
}

// paths.json: figures, ratios and the tolerance are JSON numbers.
func TestPathsTableJSON(t *testing.T) {
	p, _ := planOn(Options{Repeats: 2}, []string{"n"})
	tab := &Table{Schema: 1, Kind: Kind, Tolerance: 0.1, DurationSeconds: 2, Repeats: 2,
		KubeProxy: ProxyMode{Mode: "iptables", Source: "x"},
		Rows:      Tabulate(p, []Sample{{Path: HostHost, Test: TestTCPRR, Repeat: 1, Figure: 1000}, {Path: PodPodSameNode, Test: TestTCPRR, Repeat: 1, Figure: 800}})}
	dir := t.TempDir()
	if err := WriteTable(dir, tab); err != nil {
		t.Fatal(err)
	}
	back, err := ReadTable(dir)
	if err != nil || len(back.Rows) != len(tab.Rows) {
		t.Fatalf("read back: %v", err)
	}
	b, _ := json.Marshal(tab)
	var raw struct {
		Tolerance any              `json:"tolerance"`
		Duration  any              `json:"duration_seconds"`
		Rows      []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if _, ok := raw.Tolerance.(float64); !ok {
		t.Errorf("tolerance %T", raw.Tolerance)
	}
	if _, ok := raw.Duration.(float64); !ok {
		t.Errorf("duration_seconds %T", raw.Duration)
	}
	var checked int
	for _, r := range raw.Rows {
		if r["path"] != PodPodSameNode || r["test"] != TestTCPRR {
			continue
		}
		for _, k := range []string{"median", "min", "max", "ratio", "spread"} {
			if _, ok := r[k].(float64); !ok {
				t.Errorf("%s: %T %v", k, r[k], r[k])
			}
		}
		if f, ok := r["figures"].([]any); !ok || len(f) != 1 || f[0] != 800.0 {
			t.Errorf("figures %v", r["figures"])
		}
		checked++
	}
	if checked != 1 {
		t.Errorf("no pod-pod-same-node tcp-rr row in %s", b)
	}
	if err := WriteTable(dir, &Table{Kind: "other"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadTable(dir); err == nil {
		t.Error("a table of another kind was read")
	}
}

func TestPathsTableText(t *testing.T) {
	p, _ := planOn(Options{Repeats: 1, Judge: JudgeAll}, []string{"only"})
	var samples []Sample
	for _, m := range p.Measurements() {
		f := 1000.0
		if m.Path.Name == PodNodePort {
			f = 500
		}
		samples = append(samples, Sample{Path: m.Path.Name, Test: m.Test.Name, Repeat: 1, Figure: f,
			MachineSaturated: m.Path.Name == PodClusterIP && m.Test.Name == TestHTTP})
	}
	tab := &Table{Kind: Kind, Tolerance: 0.1, Judge: JudgeAll, Repeats: 1, DurationSeconds: 2, MessageSize: 1024, HTTPConnections: 4,
		Nodes:     Nodes{Schedulable: []string{"only"}, Server: "only"},
		KubeProxy: ProxyMode{Mode: "nftables", Source: "kube-proxy: GET /api/v1/nodes/only:10249/proxy/proxyMode"},
		Rows:      Tabulate(p, samples)}
	tab.Passed = Passed(tab.Rows)
	var b bytes.Buffer
	if err := tab.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"kube-proxy: nftables (from kube-proxy: GET /api/v1/nodes/only:10249/proxy/proxyMode)",
		"pod-pod-other-node: not measurable here: one schedulable node (only)",
		"tolerance 10%, every pod row (--judge all): 4 of the judged rows fall further below hostNetwork: pod-nodeport tcp-stream 0.50",
		"flags: G the client's generator was saturated, M the machine's CPU was",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if !regexpMatch(`(?m)^pod-clusterip\s+tcp-rr\s+1000\s+trans/s\s+1000–1000\s+0\.0%\s+1\.00\s+1\.00–1\.00\s+ok$`, out) ||
		!regexpMatch(`(?m)^pod-clusterip\s+http\s+1000\s+req/s\s+.*1\.00\s+M\s+ok$`, out) ||
		!regexpMatch(`(?m)^host-host\s+tcp-stream\s+1000\.00\s+Gbit/s\s+.*1 \(base\)\s+–\s+baseline$`, out) {
		t.Errorf("rows:\n%s", out)
	}
}

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }

// TestNetperfRule checks that by default the tolerance judges what
// k8s-netperf's pass/fail judges. Its docs/output-and-results.md:
// "k8s-netperf has a cli option for --tcp-tolerance which defaults to 10%.
// ... k8s-netperf must be able to run with hostNetwork and podNetwork across
// nodes"; its README's table gives "Pass/Fail Context" Yes for TCP_STREAM and
// No for TCP_RR and TCP_CRR. So only pod-pod-other-node's tcp-stream row is
// judged, against host-host-other-node; the other rows keep their ratio,
// not judged — a same-node pod row against hostNetwork over lo is slower
// by construction, and used to fail every run.
func TestNetperfRule(t *testing.T) {
	p, err := planOn(Options{Repeats: 1, Tolerance: 0.1}, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if p.Options.Judge != JudgeNetperf {
		t.Fatalf("default judge %q, want %s", p.Options.Judge, JudgeNetperf)
	}
	// Every pod row at half its hostNetwork row's figure.
	var samples []Sample
	for _, m := range p.Measurements() {
		f := 1000.0
		if m.Path.Baseline != "" {
			f = 500
		}
		samples = append(samples, Sample{Path: m.Path.Name, Test: m.Test.Name, Repeat: 1, Figure: f})
	}
	rows := Tabulate(p, samples)
	judged := 0
	for _, r := range rows {
		switch {
		case r.Path == PodPodOtherNode && r.Test == TestTCPStream:
			judged++
			if r.Verdict != VerdictBelow {
				t.Errorf("%s %s: %s, want %s", r.Path, r.Test, r.Verdict, VerdictBelow)
			}
		case r.Baseline != "":
			if r.Verdict != VerdictNotJudged || r.Ratio == nil || *r.Ratio != 0.5 {
				t.Errorf("%s %s: %s, ratio %v; want not judged, its ratio kept", r.Path, r.Test, r.Verdict, r.Ratio)
			}
		}
	}
	if judged != 1 || Passed(rows) {
		t.Errorf("%d rows judged, passed %v; want the one, failing", judged, Passed(rows))
	}
	// Within the tolerance there, the run passes whatever the others read.
	for i := range samples {
		if samples[i].Path == PodPodOtherNode && samples[i].Test == TestTCPStream {
			samples[i].Figure = 950
		}
	}
	if rows := Tabulate(p, samples); !Passed(rows) {
		t.Error("the judged row within the tolerance, the run failed")
	}
	// One node: nothing k8s-netperf would judge; said, and not a failure.
	one, _ := planOn(Options{Repeats: 1, Tolerance: 0.1}, []string{"only"})
	var s1 []Sample
	for _, m := range one.Measurements() {
		s1 = append(s1, Sample{Path: m.Path.Name, Test: m.Test.Name, Repeat: 1, Figure: 100})
	}
	tab := &Table{Kind: Kind, Tolerance: 0.1, Judge: JudgeNetperf, Repeats: 1, Rows: Tabulate(one, s1), Nodes: Nodes{Schedulable: []string{"only"}, Server: "only"}}
	tab.Passed = Passed(tab.Rows)
	var b bytes.Buffer
	if err := tab.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !tab.Passed || !strings.Contains(b.String(), "no row is judged here") {
		t.Errorf("one node: passed %v\n%s", tab.Passed, b.String())
	}
	if err := (Options{Judge: "some"}).Validate(); err == nil {
		t.Error("--judge some accepted")
	}
}

// The CNI a run was told (--cni) is printed and kept beside the Flannel
// backend its nodes ran, which it names otherwise.
func TestPathsTableCNI(t *testing.T) {
	for _, c := range []struct {
		cni, flannel, want string
	}{
		{"macvlan", "", "CNI: macvlan (as named by --cni)"},
		{"", "vxlan", "CNI: Flannel, vxlan backend (the nodes' " + FlannelBackendAnnotation + ")"},
		{"vxlan", "vxlan", "CNI: Flannel, vxlan backend"},
		{"ebpf", "vxlan", "CNI: ebpf (as named by --cni); Flannel, vxlan backend"},
	} {
		tab := &Table{Kind: Kind, Nodes: Nodes{Schedulable: []string{"a"}, Server: "a"}, CNI: c.cni, Flannel: c.flannel}
		var b bytes.Buffer
		if err := tab.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("--cni %q on Flannel %q: no %q in\n%s", c.cni, c.flannel, c.want, b.String())
		}
	}
}
