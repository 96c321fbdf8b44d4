package results

import (
	"time"
)

// Cost is what a process spent during the run.
type Cost struct {
	CPUSeconds  float64 `json:"cpu_s"` // user + system
	UserSeconds float64 `json:"user_s"`
	SysSeconds  float64 `json:"sys_s"`
	PeakRSS     int64   `json:"peak_rss_bytes"` // during the measured window
	// CPUs is what the process could use: GOMAXPROCS, the CPUs it may run
	// on and its cgroup's CPU quota, the least of them.
	CPUs        float64 `json:"cpus_allowed"`
	Quota       float64 `json:"cpu_quota,omitempty"` // the cgroup's CPU limit in cores, if any
	Utilization float64 `json:"utilization"`         // CPUSeconds / (CPUs × wall)
	Saturated   bool    `json:"saturated"`           // Utilization > SaturatedAbove
}

// MachineCost is the CPU the whole machine spent (/proc/stat: every
// process) over a run's measured window.
type MachineCost struct {
	CPUs        int     `json:"cpus_online"`
	BusyCores   float64 `json:"busy_cores"`  // mean over the window
	Utilization float64 `json:"utilization"` // BusyCores / CPUs
	Saturated   bool    `json:"saturated"`   // Utilization >= SaturatedAbove
}

// SaturatedAbove is the share of its allowed CPU past which the generator
// may be measuring itself rather than the target.
const SaturatedAbove = 0.9

// MinShareWindow is the shortest window over which the generator's share
// of its CPUs says anything of the load: over a shorter one (a short -n
// run) it measures the run's start, and the generator is never called
// saturated.
const MinShareWindow = 100 * time.Millisecond

// The roles of a cluster's watches that are context, not the path's own
// cost: a mesh's control plane, and a node's whole usage (which holds
// every pod on it, the generator's too). Added-cost figures leave them
// out; they are reported beside.
const (
	RoleControlPlane = "control-plane"
	RoleNode         = "node"
)

// PathCost tells whether a watch's cost is the path's own: a proxy's or
// the target's, not a control plane's or a node's.
func (c ProcessCost) PathCost() bool { return c.Role != RoleControlPlane && c.Role != RoleNode }

// ProcessCost is what a watched set of processes spent during a step's
// measured window (warm-up and the last second trimmed).
type ProcessCost struct {
	Name     string `json:"name"`     // e.g. nginx, target
	Selector string `json:"selector"` // name:nginx, pid:123, cgroup:/sys/fs/cgroup/…
	Role     string `json:"role"`     // proxy or target; on a cluster also RoleControlPlane, RoleNode
	// Side is the side of the path a proxy serves: client (the load
	// generators' sidecars), server (the target's), or empty (a proxy
	// between them, or serving both: an ingress, a gateway, a waypoint, a
	// node agent).
	Side string `json:"side,omitempty"`
	// NoProxy says why a side has no proxy in this run (the workers run no
	// sidecar with --mode serveronly): the figures are absent, not zero
	// nor unmeasured.
	NoProxy     string  `json:"no_proxy,omitempty"`
	Samples     int     `json:"samples"`
	Processes   int     `json:"processes"`
	CPUSeconds  float64 `json:"cpu_s"`
	CPUMean     float64 `json:"cpu_cores_mean"`
	CPUMax      float64 `json:"cpu_cores_max"`
	MemMean     int64   `json:"mem_bytes_mean"`
	MemMax      int64   `json:"mem_bytes_max"`
	CPUPer1kRPS float64 `json:"cpu_cores_per_1k_rps"` // the figure Istio publishes for its sidecar
	MiBPer1kRPS float64 `json:"mib_per_1k_rps"`
	// Covered is the time the CPU figure spans, in seconds, when it is
	// read from a source that measures over windows of its own (a
	// cluster's metrics-server or cAdvisor): part of the step's load; on
	// a local sweep, the span sampled (the measured window, trimmed:
	// --trim-start, --trim-end).
	Covered float64 `json:"covered_s,omitempty"`
	// CoveredFrom and CoveredTo are when the span the CPU figure is the
	// mean over began and ended (its source's first and last measurement
	// within the load): a load that was not even over the step reads as
	// that span's, not the step's.
	CoveredFrom *time.Time `json:"covered_from,omitempty"`
	CoveredTo   *time.Time `json:"covered_to,omitempty"`
	// Unmeasured says why there is no figure (the source's resolution is
	// coarser than the step, a pod had no samples): the figures are then 0
	// and mean nothing.
	Unmeasured string `json:"unmeasured,omitempty"`
}
