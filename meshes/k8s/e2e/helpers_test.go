package e2e

import (
	"net"
	"net/url"
	"sort"
	"strings"
	"testing"

	"loadgen/meshes/k8s/worker"
	"loadgen/results"
	"loadgen/results/merge"
)

func hostPort(t *testing.T, host string) (string, string) {
	t.Helper()
	u, err := url.Parse(host)
	if err != nil {
		t.Fatal(err)
	}
	h, p, err := net.SplitHostPort(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	return h, p
}

// remerge merges again what the workers of one step printed (their logs,
// by pod name; the step's pods are those named with prefix), as the
// coordinator must have: want is how many workers there were.
func remerge(t *testing.T, logs map[string]string, prefix string, want int) (*results.Run, []*worker.Report) {
	t.Helper()
	var in []merge.Input
	var reps []*worker.Report
	for pod, log := range logs {
		if !strings.HasPrefix(pod, prefix) {
			continue
		}
		rep, err := worker.ParseReport([]byte(log))
		if err != nil {
			t.Fatalf("%s: %v\n%s", pod, err, log)
		}
		in = append(in, merge.Input{Source: pod, Run: rep.Run})
		reps = append(reps, rep)
	}
	if len(in) != want {
		t.Fatalf("%d worker logs of %s*, want %d", len(in), prefix, want)
	}
	sort.Slice(in, func(a, b int) bool { return in[a].Source < in[b].Source })
	run, _, err := merge.RunsWith(in, merge.Options{AllowSkew: true}) // as the coordinator
	if err != nil {
		t.Fatal(err)
	}
	return run, reps
}
