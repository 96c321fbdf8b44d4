package results

// Step is one run of a sweep, as stored in a sweep's results directory:
// where it sits in the plan, the run (absent when the step failed), and the
// CPU and memory of the processes watched during its measured window.
type Step struct {
	Schema      int     `json:"schema"`
	Tool        string  `json:"tool"` // "loadgen"
	Index       int     `json:"index"`
	ID          string  `json:"id"`
	Path        string  `json:"path"`
	Baseline    bool    `json:"baseline,omitempty"`
	Rung        string  `json:"rung"` // c4t4
	Connections int     `json:"connections"`
	Threads     int     `json:"threads"`
	Payload     int     `json:"payload"`
	Rate        float64 `json:"rate,omitempty"` // asked; 0 closed loop
	Repeat      int     `json:"repeat"`
	Workers     int     `json:"workers,omitempty"` // the path's proxy worker processes (ingress sizing)

	Run *Run `json:"run,omitempty"`
	// Failed is why there is no run, or why the run does not stand (its
	// proxy died during it; its answers were not its baseline's kind).
	Failed string `json:"failed,omitempty"`
	// Interrupted is set when Ctrl-C cut the step short (before its load
	// began, when it has no run); a resume runs it again.
	Interrupted bool          `json:"interrupted,omitempty"`
	Watched     []ProcessCost `json:"watched,omitempty"`
	// Cluster is where a step on a cluster ran (k8s run).
	Cluster *Placement `json:"cluster,omitempty"`
}

// Placement is where a step on a cluster ran: the Kubernetes version, each
// pod of the comparison on its node with its proxies' images, and the
// resources the workers asked for.
type Placement struct {
	Kubernetes string      `json:"kubernetes_version,omitempty"` // the API server's (discovery): v1.35.0
	Pods       []PlacedPod `json:"pods,omitempty"`
	// WorkerRequests and WorkerLimits are the worker container's
	// resources: cpu=100m,memory=64Mi ("" for none).
	WorkerRequests string `json:"worker_requests,omitempty"`
	WorkerLimits   string `json:"worker_limits,omitempty"`
	// StartRetries is how many times the step was run again because its
	// workers' pods started late (its figures are the last run's alone);
	// StartLead is the start lead, in seconds, that run had.
	StartRetries int     `json:"start_retries,omitempty"`
	StartLead    float64 `json:"start_lead_s,omitempty"`
}

// PlacedPod is a pod of a step and the node it ran on.
type PlacedPod struct {
	// Role is target, direct-target, worker, or the proxy's watch name
	// (waypoint, ztunnel, ingress-nginx, ingress, gateway).
	Role string `json:"role"`
	Name string `json:"name"`
	Node string `json:"node"`
	// Proxies are its proxy containers and their images: a sidecar, or
	// every container of a proxy's pod.
	Proxies []ContainerImage `json:"proxies,omitempty"`
}

// ContainerImage is a container, the image it ran, and the terms it ran
// on, as its pod's spec says (a sidecar as the mesh's injector made it,
// whatever loadgen asked for).
type ContainerImage struct {
	Container string `json:"container"`
	Image     string `json:"image"`
	// Threads are the worker threads its spec gives it (Envoy's
	// --concurrency, Linkerd's LINKERD2_PROXY_CORES, App Mesh's
	// ENVOY_CONCURRENCY); 0: none said, the proxy's own default.
	Threads int `json:"threads,omitempty"`
	// Requests and Limits are its resources: cpu=1,memory=512Mi ("" for
	// none).
	Requests string `json:"requests,omitempty"`
	Limits   string `json:"limits,omitempty"`
}

// Failure says why the step failed, or "" if it did not: it has no run
// (Failed, or "no result"), its run was failed after it ran (Failed: its
// proxy died, its answers were not its baseline's kind), or its run, not
// interrupted, sent nothing or had no request succeed — a path answering
// 503 to everything, fast, has figures of failures only.
func (st *Step) Failure() string {
	if st.Failed != "" {
		return st.Failed
	}
	if st.Run == nil {
		return "no result"
	}
	if st.Run.Aborted != "" {
		return st.Run.Aborted
	}
	if st.Run.Interrupted {
		return ""
	}
	return st.Run.Summary.Verdict()
}

// Finished tells whether the step ran to its end (or failed): not one
// Ctrl-C cut short, which a resume runs again.
func (st *Step) Finished() bool { return !st.Interrupted && (st.Run == nil || !st.Run.Interrupted) }

// FinishedSteps counts the steps that are Finished.
func FinishedSteps(steps []*Step) int {
	n := 0
	for _, st := range steps {
		if st.Finished() {
			n++
		}
	}
	return n
}
