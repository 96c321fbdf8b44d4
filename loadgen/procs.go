package loadgen

import (
	"math"

	"loadgen/loadgen/protocol"
)

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
