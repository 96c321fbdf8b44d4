package loadgen

import (
	"math"
	"runtime"

	"loadgen/loadgen/protocol"
	"loadgen/results/cost"
)

// LocalProcs is Procs on this machine: capped by the CPUs the process may
// run on (runtime.NumCPU) and by its cgroup's CPU quota (cost.CPUQuota),
// as the run's Config records them. It reads the process, never changes
// it: the caller sets GOMAXPROCS (MaxProcs).
func LocalProcs(threads, cpus int) int {
	return Procs(threads, cpus, runtime.NumCPU(), localQuota())
}

// localQuota is the process's cgroup CPU quota in cores; 0 for none.
func localQuota() float64 {
	if q, ok := cost.CPUQuota(); ok {
		return q
	}
	return 0
}

// Procs is the processors of a run (Config.Procs): cpus if given, else
// threads, capped by the CPUs the process may run on (online) and by its
// cgroup's CPU quota in cores, rounded up (a pod's limits.cpu; 0, +Inf or
// NaN: none): more OS threads than the quota allows only get throttled.
// At least 1.
func Procs(threads, cpus, online int, quota float64) int {
	n := threads
	if cpus > 0 {
		n = cpus
	}
	if online > 0 {
		n = min(n, online)
	}
	if quota > 0 && quota < float64(n) {
		n = max(1, int(math.Ceil(quota)))
	}
	return max(1, n)
}

// MaxProcs is the GOMAXPROCS a run of cfg on d wants: cfg.Procs, or one
// above for a run on event loops, whose loops then wait for events holding
// their Ps while the rest of the process (reporter, signals, an
// in-process target) keeps the spare one. The caller sets it: the engine
// never changes the process.
func MaxProcs(cfg Config, d protocol.Dialer) int {
	n := max(1, cfg.Procs)
	if SpareP(cfg, d) {
		n++
	}
	return n
}
