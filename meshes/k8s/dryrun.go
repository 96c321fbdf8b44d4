package k8s

import (
	"fmt"
	"io"
	"time"
)

// DryRun prints what Run would apply and the plan — each step's Job, its
// workers' shares and the URL they load — without touching a cluster.
func (k *Coordinator) DryRun(w io.Writer) error {
	k.defaults()
	o, err := k.Options.withDefaults()
	if err != nil {
		return err
	}
	k.Options = o
	objs, notes, err := k.Objects()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "# loadgen k8s run %s (dry run): mesh %s, namespace %s, %d steps of %d workers\n", o.RunID, o.Mesh, o.Namespace, len(k.Steps), k.Workers)
	for _, n := range notes {
		fmt.Fprintf(w, "# %s\n", n)
	}
	for i, st := range k.Steps {
		args, err := o.runArgs(k.Load, st, Addresses{})
		if err != nil {
			return fmt.Errorf("step %s: %w", st.ID, err)
		}
		fmt.Fprintf(w, "# step %d %s: Job %s, %s\n", st.Index, st.ID, JobName(o.RunID, st.Index), args[len(args)-1])
		for i := range k.Workers {
			s, err := ShareOf(st.Connections, st.Threads, st.Rate, k.Workers, i)
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
			spec := JobSpec{Name: JobName(o.RunID, st.Index), Workers: k.Workers, StartAt: time.Time{}, MaxLate: k.MaxLate,
				Connections: st.Connections, Threads: st.Threads, Rate: st.Rate, RunArgs: args, Index: st.Index, Direct: directURL(st.URL),
				Deadline: k.StartLead + k.Load.Warmup + k.Load.Duration + k.Load.Timeout + 30*time.Second}
			s, err := NewScheme()
			if err != nil {
				return err
			}
			u, err := toUnstructured(s, o.Job(spec))
			if err != nil {
				return err
			}
			objs = append(objs, u)
		}
	}
	fmt.Fprintf(w, "# the first step's Job is below; each step gets --start-at %v ahead of its creation\n", k.StartLead)
	r := &Rendering{Objects: objs}
	return r.WriteYAML(w)
}
