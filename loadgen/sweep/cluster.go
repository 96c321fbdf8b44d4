package sweep

import (
	"encoding/json"
	"fmt"
	"strings"

	"loadgen/loadgen"
	"loadgen/results"
)

// CheckCluster refuses what a sweep names on this machine and a cluster's
// workers cannot see (k8s run): local files, processes and namespaces; and
// the local sweep's cost window (trim_start, trim_end).
func (s *Spec) CheckCluster() error {
	if s.TrimStart != nil || s.TrimEnd != nil {
		return fmt.Errorf("trim_start and trim_end are the local sweep's: k8s run measures each step's cost over the spans its metrics source covers")
	}
	if s.Protoset != "" {
		return fmt.Errorf("protoset: a file on this machine is not in the workers' image; the workers use server reflection")
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
		}
	}
	return nil
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
