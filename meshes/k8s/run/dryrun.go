package run

import (
	"fmt"
	"io"
	"strings"
	"time"

	"loadgen/meshes/k8s"
	"loadgen/meshes/k8s/worker"
)

// DryRun prints what Run would apply and the plan — each step's Job, its
// workers' shares and the URL they load — without touching a cluster.
func (k *Coordinator) DryRun(w io.Writer) error {
	if err := k.Check(); err != nil {
		return err
	}
	o := k.Options
	objs, notes, err := k.Objects()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "# loadgen k8s run %s (dry run): mesh %s, namespace %s, %d steps of %d workers\n", o.RunID, o.Mesh, o.Namespace, len(k.Steps), k.Workers)
	for _, n := range notes {
		fmt.Fprintf(w, "# %s\n", n)
	}
	for _, p := range o.ProxySetups() {
		fmt.Fprintf(w, "# proxy %s (%s): %s\n", p.Name, p.Side, proxyTerms(p))
	}
	if via := o.ViaOf(); via != "" {
		svc := ""
		if o.IngressService != "" {
			svc = ", --ingress-service " + o.IngressService
		}
		fmt.Fprintf(w, "# the workers reach the %s %s (--via %s%s)\n", o.Mesh, map[string]string{
			k8s.ViaService: "at its controller's Service inside the cluster", k8s.ViaPublished: "at the address it publishes"}[via], via, svc)
	}
	if cps, _ := o.ControlPlanes(); len(cps) > 0 {
		for _, cp := range cps {
			fmt.Fprintf(w, "# control plane %s: pods %s in %s\n", cp.Name, cp.Selector, cp.Namespace)
		}
	} else if note := k8s.ControlPlaneNote(o); note != "" {
		fmt.Fprintf(w, "# %s\n", note)
	}
	for i, st := range k.Steps {
		args, err := o.RunArgs(k.Load, st, k8s.Addresses{})
		if err != nil {
			return fmt.Errorf("step %s: %w", st.ID, err)
		}
		fmt.Fprintf(w, "# step %d %s: Job %s, %s\n", st.Index, st.ID, k8s.JobName(o.RunID, st.Index), args[len(args)-1])
		for i := range k.Workers {
			s, err := worker.ShareOf(st.Connections, st.Threads, st.Rate, k.Workers, i)
			if err != nil {
				fmt.Fprintf(w, "#   fails: %v\n", err)
				break
			}
			fmt.Fprintf(w, "#   worker %d: -c %d -t %d", i, s.Connections, s.Threads)
			if s.Rate > 0 {
				fmt.Fprintf(w, " -R %g", s.Rate)
			}
			fmt.Fprintln(w)
		}
		if i == 0 {
			spec := k8s.JobSpec{Name: k8s.JobName(o.RunID, st.Index), Workers: k.Workers, StartAt: time.Time{}, MaxLate: k.MaxLate,
				Connections: st.Connections, Threads: st.Threads, Rate: st.Rate, RunArgs: args, Index: st.Index, Direct: k8s.DirectURL(st.URL),
				Deadline: k.StartLead + k.Load.Warmup + k.Load.Duration + k.Load.Timeout + 30*time.Second, Version: k.Version,
				ClientCert: st.ClientCert != ""}
			us, err := k8s.ToUnstructured(o.Job(spec))
			if err != nil {
				return err
			}
			objs = append(objs, us...)
		}
	}
	fmt.Fprintf(w, "# the first step's Job is below; each step gets --start-at %v ahead of its creation\n", k.StartLead)
	for _, u := range objs {
		if u.GetKind() == "Secret" && u.GetName() == k8s.ClientCertSecret {
			// The paths' keys are not printed: their names only.
			fmt.Fprintf(w, "# Secret %s: the paths' client certificates and keys, from their files (not printed)\n", k8s.ClientCertSecret)
			data, _ := u.Object["data"].(map[string]any)
			for name := range data {
				data[name] = ""
			}
		}
	}
	r := &k8s.Rendering{Objects: objs}
	return r.WriteYAML(w)
}

// proxyTerms says what a proxy was given, in a line.
func proxyTerms(p k8s.ProxySetup) string {
	var parts []string
	if p.Threads > 0 {
		parts = append(parts, fmt.Sprintf("%d worker threads", p.Threads))
	}
	if p.CPURequest != "" {
		parts = append(parts, "CPU request "+p.CPURequest)
	}
	if p.CPULimit != "" {
		parts = append(parts, "CPU limit "+p.CPULimit)
	}
	if p.MemoryRequest != "" {
		parts = append(parts, "memory request "+p.MemoryRequest)
	}
	if len(p.Set) > 0 {
		parts = append(parts, "by "+strings.Join(p.Set, ", "))
	}
	if p.Note != "" {
		parts = append(parts, p.Note)
	}
	return strings.Join(parts, "; ")
}
