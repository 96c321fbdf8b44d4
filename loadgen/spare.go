package loadgen

import (
	"runtime"
	"sync"
)

// The event loops wait for events holding their P (waitEvents), so that a
// loop at one request in flight does not lose and win back a P per
// request. With every P held by a loop, nothing else in the process would
// run but every 10 ms, when sysmon preempts a loop: the reporter, a
// Prometheus scrape, Ctrl-C, an in-process target or proxy. So a loop run
// adds one P for its duration. Nothing of the loops' is scheduled there;
// the generator's allowed CPUs (its cost, the saturation check) and the
// number of loops are counted without it.
var spare struct {
	sync.Mutex
	runs int // loop runs now active
	base int // GOMAXPROCS before the first of them added the spare P
}

// baseProcs is GOMAXPROCS less the spare P of active loop runs.
func baseProcs() int {
	spare.Lock()
	defer spare.Unlock()
	if spare.runs > 0 {
		return spare.base
	}
	return runtime.GOMAXPROCS(0)
}

// addSpareP adds the spare P for a loop run; release takes it back when
// the last such run ends.
func addSpareP() (release func()) {
	spare.Lock()
	defer spare.Unlock()
	if spare.runs == 0 {
		spare.base = runtime.GOMAXPROCS(0)
		runtime.GOMAXPROCS(spare.base + 1)
	}
	spare.runs++
	return func() {
		spare.Lock()
		defer spare.Unlock()
		if spare.runs--; spare.runs == 0 {
			runtime.GOMAXPROCS(spare.base)
		}
	}
}
