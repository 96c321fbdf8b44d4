package main

import (
	"encoding/xml"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"loadgen/loadgen/study"
	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/paths"
	"loadgen/results"
	"loadgen/results/store"
)

// Every command that runs load takes --label, and refuses a bad one in
// one line with exit status 2, before anything runs.
func TestLabelUsageErrors(t *testing.T) {
	for _, cmd := range [][]string{{"run"}, {"sweep"}, {"size"}, {"lab"}, {"study", "list"}, {"k8s", "run"}, {"k8s", "paths"}} {
		for _, bad := range []struct {
			flags []string
			msg   string
		}{
			{[]string{"--label", "=x"}, "empty key"},
			{[]string{"--label", "k"}, "want KEY=VALUE"},
			{[]string{"--label", "k=1", "--label", "k=2"}, `key "k" given twice`},
		} {
			args := append(append(append([]string{}, cmd...), bad.flags...), "http://127.0.0.1:1/")
			code, stdout, stderr := cli(t, args...)
			first := strings.SplitN(stderr, "\n", 2)[0]
			if code != exitUsage || !strings.HasPrefix(first, "loadgen: ") || !strings.Contains(first, "--label") || !strings.Contains(first, bad.msg) {
				t.Errorf("%s: exit %d, first line %q, want 2 and a --label error with %q\n%s", strings.Join(args, " "), code, first, bad.msg, stdout)
			}
		}
	}
}

// runLabels are the labels the flags give `loadgen run`, as a worker's
// command line is parsed.
func runLabels(t *testing.T, args []string) results.Labels {
	t.Helper()
	return cmdLabels(t, newRunCmd(), args)
}

// cmdLabels are the labels the flags give cmd.
func cmdLabels(t *testing.T, cmd *cobra.Command, args []string) results.Labels {
	t.Helper()
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return *cmd.Flags().Lookup("label").Value.(labelsValue).p
}

// TestRunCarriesLabels checks that a run's labels are in its JSON and its
// JUnit report's properties.
func TestRunCarriesLabels(t *testing.T) {
	url := startHTTPBin(t) + "/get"
	dir := t.TempDir()
	out, junit := filepath.Join(dir, "run.json"), filepath.Join(dir, "junit.xml")
	code, stdout, stderr := cli(t, "run", "-n", "50", "-c", "1", "-q", "--label", "mesh=istio", "--label", "build=4.2",
		"--json", out, "--junit", junit, url)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	want := results.Labels{"mesh": "istio", "build": "4.2"}
	run, err := store.ReadRun(out)
	if err != nil {
		t.Fatal(err)
	}
	if !run.Labels.Equal(want) {
		t.Errorf("JSON labels %v, want %v", run.Labels, want)
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Props []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"testsuite>properties>property"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	got := results.Labels{}
	for _, p := range doc.Props {
		got[p.Name] = p.Value
	}
	if !got.Equal(want) {
		t.Errorf("JUnit properties %v, want %v\n%s", got, want, b)
	}
}

// TestPrometheusCarriesLabels checks that --prometheus's series carry the
// labels.
func TestPrometheusCarriesLabels(t *testing.T) {
	_, url, stop, err := serveMetrics("127.0.0.1:0", results.Labels{"mesh.name": "istio"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `loadgen_rate_achieved{mesh_name="istio"}`) {
		t.Errorf("no labelled series:\n%s", b)
	}
}

// TestSweepCarriesLabels checks that every step of a sweep carries its
// labels.
func TestSweepCarriesLabels(t *testing.T) {
	url := startHTTPBin(t)
	out := filepath.Join(t.TempDir(), "sweep")
	code, stdout, stderr := cli(t, "sweep", "--path", "baseline="+url, "--ladder", "c1t1,c2t1", "--payloads", "100", "-d", "200ms", "-q",
		"--label", "mesh=none", "-o", out)
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	_, steps, err := store.ReadSweep(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 {
		t.Fatalf("%d steps", len(steps))
	}
	for _, st := range steps {
		if st.Run == nil || !st.Run.Labels.Equal(results.Labels{"mesh": "none"}) {
			t.Errorf("step %s: labels %v", st.ID, st.Run)
		}
	}
}

// TestWorkersCarryLabels checks that k8s run gives every worker's loadgen run
// the labels (and so the merge of their runs has them: results/merge), k8s
// paths every client Job's, a study every step's.
func TestWorkersCarryLabels(t *testing.T) {
	want := results.Labels{"mesh": "istio", "run.note": "a b"}
	o := k8s.Options{Mesh: k8s.MeshNone, Namespace: "b"}
	args, err := o.RunArgs(k8s.Load{Duration: time.Second, Labels: want}, k8s.Step{URL: "http://target:8080", Payload: 100}, k8s.Addresses{})
	if err != nil {
		t.Fatal(err)
	}
	if got := runLabels(t, args); !got.Equal(want) {
		t.Errorf("k8s run worker %q: labels %v", args, got)
	}
	nodes := []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "a"}}, {ObjectMeta: metav1.ObjectMeta{Name: "b"}}}
	p, err := paths.NewPlan(paths.Options{Repeats: 1, Labels: want}, nodes)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range p.Measurements() {
		args := p.RunArgs(m, paths.Endpoints{NodeIP: "198.18.80.6", PodIP: "198.18.80.5", ClusterIP: "198.18.80.7", NodePortTCP: 30000, NodePortHTTP: 30001})
		if got := runLabels(t, args); !got.Equal(want) {
			t.Errorf("k8s paths %q: labels %v", args, got)
		}
	}
	f := &studyFlags{out: "o", labels: want}
	args = f.stepArgs(study.Step{Args: []string{"sweep"}}, true)
	if got := cmdLabels(t, newSweepCmd(), args[1:]); !got.Equal(want) {
		t.Errorf("study step %q: labels %v", args, got)
	}
}

// TestOptionsFileLabels checks that an options file's label list (size, lab
// -f) gives one label per item; the command line's --label wins.
func TestOptionsFileLabels(t *testing.T) {
	path := filepath.Join(t.TempDir(), "opts.yaml")
	if err := os.WriteFile(path, []byte("label: [mesh=istio, \"note=a, b\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := newSizeCmd()
	if err := applyFlagFile(cmd.Flags(), path); err != nil {
		t.Fatal(err)
	}
	if got, want := cmdLabels(t, cmd, nil), (results.Labels{"mesh": "istio", "note": "a, b"}); !got.Equal(want) {
		t.Errorf("labels %q, want %q", map[string]string(got), map[string]string(want))
	}
	cmd = newSizeCmd()
	if err := cmd.ParseFlags([]string{"--label", "mesh=linkerd"}); err != nil {
		t.Fatal(err)
	}
	if err := applyFlagFile(cmd.Flags(), path); err != nil {
		t.Fatal(err)
	}
	if got := *cmd.Flags().Lookup("label").Value.(labelsValue).p; !got.Equal(results.Labels{"mesh": "linkerd"}) {
		t.Errorf("command line and file: labels %v, want the command line's", got)
	}
}
