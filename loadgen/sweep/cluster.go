package sweep

import (
	"encoding/json"
	"fmt"
	"strings"

	"loadgen/loadgen"
	"loadgen/results"
)

// CheckCluster refuses what a sweep names on this machine and a cluster's
// workers cannot see (k8s run): local files (protoset, proto and
// import_paths, feed, a data file, a path's cacert), processes, namespaces
// and sidecars; a local proxy's worker count (a path's workers); the local
// sweep's cost window (trim_start, trim_end); and an arrival process or a
// jitter with no open-loop step (CheckArrival, which k8s run has no -R to
// meet). Every other key reaches the workers (loadgen/k8splan).
func (s *Spec) CheckCluster() error {
	if s.TrimStart != nil || s.TrimEnd != nil {
		return fmt.Errorf("trim_start and trim_end are the local sweep's: k8s run measures each step's cost over the spans its metrics source covers")
	}
	if s.Protoset != "" {
		return fmt.Errorf("protoset: a file on this machine is not in the workers' image; the workers use server reflection")
	}
	if len(s.Proto) > 0 || len(s.ImportPaths) > 0 {
		return fmt.Errorf("proto and import_paths: files on this machine are not in the workers' image; leave them out: the workers use server reflection")
	}
	if s.Feed != "" {
		return fmt.Errorf("feed %s: a file on this machine is not in the workers' image; leave out feed and the endpoint's {{row.…}} fields, or run the sweep with loadgen sweep", s.Feed)
	}
	if strings.HasPrefix(s.Data, "@") {
		return fmt.Errorf("data %s: a file on this machine is not in the workers' image; give the message inline", s.Data)
	}
	if s.Target != nil {
		return fmt.Errorf("target: watches local processes; on a cluster loadgen watches the mesh's containers and the target pod itself")
	}
	for _, p := range s.Paths {
		switch {
		case p.Watch != nil:
			return fmt.Errorf("path %s: watch selects local processes; on a cluster loadgen watches the mesh's containers", p.Name)
		case p.CACert != "":
			return fmt.Errorf("path %s: cacert is a file on this machine, not in the workers' image; use insecure", p.Name)
		case p.NetNS != "":
			return fmt.Errorf("path %s: netns is a namespace of this machine, not of the cluster's pods", p.Name)
		case p.Sidecar != nil:
			return fmt.Errorf("path %s: sidecar runs proxies in pods of this machine; on a cluster --mesh sidecar (--proxy, --mode) puts them beside the pods: give the path url http://target:8080", p.Name)
		case p.Workers != 0:
			return fmt.Errorf("path %s: workers records a local proxy's worker processes; on a cluster k8s run records the ingress-nginx controller's own (set them with --configure-controller --worker-processes N): leave it out", p.Name)
		}
	}
	return s.checkArrival(false, "rates to the file (rate: [100]; every step is closed loop)")
}

// Manifest is the manifest of a sweep of s: the spec, its baseline, its
// paths and the environment; a runner adds its steps, schema and time.
func (s *Spec) Manifest() (results.Manifest, error) {
	spec, err := json.Marshal(s)
	if err != nil {
		return results.Manifest{}, err
	}
	m := results.Manifest{Spec: spec, Baseline: s.BaselineName(), Env: loadgen.Environment()}
	for _, p := range s.Paths {
		m.Paths = append(m.Paths, p.Name)
	}
	return m, nil
}
