package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/worker"
	"loadgen/results/store"
)

// TestK8sRunSweepKeys: a sweep file's arrival reaches the workers — the
// Job's `loadgen run` flags say --arrival poisson, and that command line,
// run as a worker runs it (its share added), records a Poisson run —
// and a key the workers cannot honour (feed, a file of this machine) is
// refused in one line naming it, before the plan. Before, k8s run dropped
// both: its workers ran uniform arrivals and no feed.
func TestK8sRunSweepKeys(t *testing.T) {
	dir := t.TempDir()
	url := startHTTPBin(t)
	sw := filepath.Join(dir, "sweep.yaml")
	if err := os.WriteFile(sw, []byte("paths:\n  - {name: mesh, url: \""+url+"\"}\nladder: c2t1\npayloads: [100]\nrate: [400]\narrival: poisson\nduration: 500ms\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := cli(t, "k8s", "run", "--mesh", "none", "-f", sw, "--workers", "2", "--dry-run", "--run-id", "keys")
	if code != 0 {
		t.Fatalf("dry run: exit %d %s", code, errOut)
	}
	objs, err := k8s.DecodeStrict([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, o := range objs {
		if job, ok := o.(*batchv1.Job); ok {
			args = job.Spec.Template.Spec.Containers[0].Args
		}
	}
	i := slices.Index(args, "run")
	if i < 0 || !slices.Contains(args[i:], "--arrival") || args[slices.Index(args, "--arrival")+1] != "poisson" {
		t.Fatalf("the workers' command line lacks --arrival poisson: %q\n%s", args, out)
	}
	// Worker 0's run, as the worker makes it (meshes/k8s/worker's
	// ShareArgs): the step's record says poisson.
	share, err := worker.ShareOf(2, 1, 400, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	res := filepath.Join(dir, "worker.json")
	runArgs := worker.ShareArgs(args[i+1:], share, res)
	if code, _, errOut := cli(t, append([]string{"run"}, runArgs...)...); code != exitOK {
		t.Fatalf("the worker's run %q: exit %d %s", runArgs, code, errOut)
	}
	run, err := store.ReadRun(res)
	if err != nil {
		t.Fatal(err)
	}
	if run.Config.Arrival != "poisson" || run.Config.Rate != 200 {
		t.Errorf("the worker's run recorded arrival %q at %g/s, want poisson at 200/s", run.Config.Arrival, run.Config.Rate)
	}

	// feed names a file of this machine: refused, naming the key, why and
	// what to do instead.
	csv := filepath.Join(dir, "users.csv")
	if err := os.WriteFile(csv, []byte("user\nada\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fed := filepath.Join(dir, "feed.yaml")
	if err := os.WriteFile(fed, []byte("paths:\n  - {name: mesh, url: \"http://target:8080\"}\nladder: c4t4\npayloads: [100]\nendpoint: \"/anything/{{row.user}}\"\nfeed: "+csv+"\nduration: 5s\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = cli(t, "k8s", "run", "--mesh", "none", "-f", fed, "--dry-run")
	want := "loadgen: " + fed + ": feed " + csv + ": a file on this machine is not in the workers' image; leave out feed and the endpoint's {{row.…}} fields, or run the sweep with loadgen sweep"
	if first, _, _ := strings.Cut(errOut, "\n"); code != exitUsage || first != want {
		t.Errorf("feed: exit %d %q, want 2 and\n%s", code, errOut, want)
	}
}
