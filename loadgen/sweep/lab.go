package sweep

// loadgen lab's plan as a sweep: one per protocol, over the CNI modes'
// paths, each sent from its client's network namespace.

// LabPath is one path of loadgen lab: meshes/lab's LoadPath, field for
// field, which converts to it (this layer may not import meshes).
type LabPath struct {
	Name     string // MODE.PATH; the baseline's own name
	Dial     string // host:port; a dry run's says where it would go
	NetNS    string // the namespace the load is sent from
	Baseline bool
}

// Lab is loadgen lab's sweep of one protocol: base (the command's sweep
// of its flags for the protocol and its payload, paths to come) over
// paths, the built labs' or, for a dry run, the planned ones. It is
// marked as the lab's (BuiltinLab), so that sweep and size refuse to
// resume it and name the command that does (ResumeRefusal).
func Lab(base Spec, paths []LabPath) *Spec {
	s := base
	s.Builtin = BuiltinLab
	s.Paths = nil
	for _, lp := range paths {
		s.Paths = append(s.Paths, Path{Name: lp.Name, URL: lp.Dial, Baseline: lp.Baseline, NetNS: lp.NetNS})
	}
	return &s
}
