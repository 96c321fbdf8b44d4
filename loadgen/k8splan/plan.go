// Package k8splan turns a sweep (loadgen/sweep) into what a distributed
// run on Kubernetes runs (meshes/k8s's Load and Steps, which
// meshes/k8s/run's Coordinator takes), refusing what a cluster cannot
// run. It is the one library that imports
// both: the sweep knows nothing of Kubernetes, and meshes never import
// the generator's side.
package k8splan

import (
	"fmt"

	"loadgen/loadgen/sweep"
	"loadgen/meshes/k8s"
)

// ForCluster is a sweep as k8s run runs it with the options o, in this
// order: it refuses what the cluster's workers cannot see
// (Spec.CheckCluster), before anything else; sets the chain's length,
// --hops over the file's (hopsGiven: the flag was given), into both
// s.Hops (which the manifest carries to the report) and o.Hops
// (Options.ChainHops); translates the plan (FromSweep); and refuses a step
// the mesh cannot carry (Options.CheckLoad), before the cluster is touched.
// The load's Labels are the caller's (--label).
func ForCluster(s *sweep.Spec, o *k8s.Options, hopsGiven bool) (k8s.Load, []k8s.Step, error) {
	if err := s.CheckCluster(); err != nil {
		return k8s.Load{}, nil, err
	}
	hops, err := o.ChainHops(s.Hops, hopsGiven)
	if err != nil {
		return k8s.Load{}, nil, err
	}
	s.Hops = hops
	load, steps, err := FromSweep(s)
	if err != nil {
		return k8s.Load{}, nil, err
	}
	if err := o.CheckLoad(load, steps); err != nil {
		return k8s.Load{}, nil, err
	}
	return load, steps, nil
}

// FromSweep turns a sweep that a cluster can run (Spec.CheckCluster) into
// the load every step shares (with the open loop's arrival process and a
// streaming call's messages and window) and the steps, in the sweep's
// order (Spec.Plan), each with its path's URL, baseline, connection and
// TLS settings. A path's client certificate is read here and goes to the
// workers in the run's Secret, named by the path's place in the file
// (k8s.PathCertName). The load's Labels are the caller's (--label).
func FromSweep(s *sweep.Spec) (k8s.Load, []k8s.Step, error) {
	load := k8s.Load{Protocol: s.Protocol, Endpoint: s.Endpoint, Duration: s.Duration.D(), Warmup: s.Warmup.D(),
		Timeout: s.Timeout.D(), Call: s.Call, Data: s.Data, Arrival: s.Arrival, JitterPct: s.JitterPct,
		Messages: s.Messages, Window: s.Window}
	certOf := map[string]string{}
	for i, p := range s.Paths {
		if p.Cert == "" {
			continue
		}
		c, err := k8s.ReadClientCert(k8s.PathCertName(i), p.Cert, p.Key)
		if err != nil {
			return k8s.Load{}, nil, fmt.Errorf("path %s: %w", p.Name, err)
		}
		load.ClientCerts = append(load.ClientCerts, c)
		certOf[p.Name] = c.Name
	}
	var steps []k8s.Step
	for _, st := range s.Plan() {
		p, _ := s.PathByName(st.Path)
		steps = append(steps, k8s.Step{Index: st.Index, ID: st.ID(), Path: st.Path, Baseline: p.Baseline, URL: p.URL,
			NewConn: p.NewConn, Insecure: p.Insecure, ClientCert: certOf[p.Name], Connections: st.Rung.Connections, Threads: st.Rung.Threads,
			Payload: st.Payload, Rate: st.Rate, Repeat: st.Repeat})
	}
	return load, steps, nil
}
