package paths

import (
	"fmt"
	"io"

	"k8s.io/apimachinery/pkg/runtime"

	"loadgen/meshes/k8s"
)

// Placeholders of a dry run: the nodes and addresses a run reads from
// the cluster.
const (
	dryNodeA     = "NODE-A"
	dryNodeB     = "NODE-B"
	dryNodeIP    = "NODE-A-IP"
	dryPodIP     = "SERVER-POD-IP"
	dryClusterIP = "CLUSTER-IP"
)

// DryRun prints the plan of a paths run — its paths, tests and
// measurements, the objects it applies and the first measurement's Job —
// without touching a cluster. The nodes and addresses, which a run reads
// from the cluster, are placeholders.
func DryRun(w io.Writer, o Options) error {
	p, err := planOn(o, []string{dryNodeA, dryNodeB})
	if err != nil {
		return err
	}
	o = p.Options
	ms := p.Measurements()
	fmt.Fprintf(w, "# loadgen k8s paths %s (dry run): namespace %s, image %s\n", o.RunID, o.Namespace, o.Image)
	judged := "k8s-netperf's rule: tcp-stream, " + PodPodOtherNode + " against " + HostHostOther
	if o.Judge == JudgeAll {
		judged = "every pod row"
	}
	fmt.Fprintf(w, "# %d repeats × %v per path × test, %d B messages; tolerance %g%% below hostNetwork, judging %s\n",
		o.Repeats, o.Duration, MessageSize, 100*o.Tolerance, judged)
	fmt.Fprintf(w, "# nodes are read from the cluster when it runs: %s is the first schedulable node (servers, same-node clients),\n", dryNodeA)
	fmt.Fprintf(w, "# %s the second; with one schedulable node the *-other-node rows say %q\n", dryNodeB, NotMeasurableOneNode)
	fmt.Fprintf(w, "# paths:\n")
	for _, path := range p.Paths {
		client := "pod"
		if path.HostNetwork {
			client = "hostNetwork client"
		}
		ratio := "the baseline"
		if path.Baseline != "" {
			ratio = "ratio to " + path.Baseline
		}
		dials := dryTarget(p, path, Tests[1]) + ", " + dryTarget(p, path, Tests[3])
		if p.HasMTLS() {
			dials += ", " + dryTarget(p, path, testSpec(TestMTLS))
		}
		fmt.Fprintf(w, "#   %-24s %s on %s → %s (%s)\n", path.Name, client, path.ClientNode, dials, ratio)
	}
	fmt.Fprintf(w, "# tests:\n")
	for _, t := range p.Tests {
		how := fmt.Sprintf("-p %s --size %d", t.Protocol, p.Size(t))
		switch t.Name {
		case TestHTTP:
			how = "GET " + HTTPEndpoint
		case TestMTLS:
			how = "GET " + HTTPEndpoint + " over mutual TLS (a CA made for the run; the client's certificate in Secret " + k8s.ClientCertSecret + ")"
		}
		fmt.Fprintf(w, "#   %-10s %-10s %s, %s, in %s\n", t.Name, t.Title, how, t.Rung(), t.Unit)
	}
	one, err := planOn(o, []string{dryNodeA})
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "# %d measurements with two nodes (%d with one), one Job each, each bounded by %v\n",
		len(ms), len(one.Measurements()), o.Duration+jobGrace)
	fmt.Fprintf(w, "# kube-proxy's mode: replaced when ConfigMap kube-system/cilium-config says kube-proxy-replacement: true, else ConfigMap kube-system/kube-proxy (kubeadm: config.conf mode:), else kube-system/kube-proxy-config (EKS: config mode:), "+
		"else the --proxy-mode of the kube-system pods %s\n", KubeProxyPodSelector)
	fmt.Fprintf(w, "# the first measurement's Job is below; each measurement gets its own\n")
	objs := append(p.Objects(), runtime.Object(p.ClientJob(ms[0], Endpoints{NodeIP: dryNodeIP, PodIP: dryPodIP, ClusterIP: dryClusterIP})))
	us, err := k8s.ToUnstructured(objs...)
	if err != nil {
		return err
	}
	return (&k8s.Rendering{Objects: us}).WriteYAML(w)
}

// dryTarget is what a path's client dials, with placeholders.
func dryTarget(p *Plan, path PathSpec, t TestSpec) string {
	switch path.reach {
	case reachPodIP:
		return target(t, dryPodIP, podPorts)
	case reachClusterIP:
		return target(t, dryClusterIP, podPorts)
	case reachNodePort:
		return target(t, dryNodeIP, ports{"NODEPORT-TCP", "NODEPORT-HTTP", "NODEPORT-MTLS"})
	}
	return p.Target(Measurement{Path: path, Test: t}, Endpoints{NodeIP: dryNodeIP})
}
