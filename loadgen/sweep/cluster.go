package sweep

import (
	"fmt"
	"strings"
)

// CheckCluster refuses what a sweep names on this machine and a cluster's
// workers cannot see (k8s run): local files, processes and namespaces.
func (s *Spec) CheckCluster() error {
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
