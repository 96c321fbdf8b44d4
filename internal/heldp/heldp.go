// Package heldp counts the Ps (the runtime's processors, GOMAXPROCS of
// them) that the process's event loops keep while they wait for events,
// so that the generator's loops and a target's served in the same process
// (as in the tests) never keep every P between them: one is always left
// for the rest of the process.
//
// A loop that keeps its P waits in epoll_pwait as a raw system call
// (Wait): no entersyscall/exitsyscall, no P handed off after 20 µs and won
// back with the answer (a futex call and two context switches per
// request), no trip through the netpoller. Its P idles in the kernel's
// wait as a C event loop's thread does. Nothing stalls on a kept P: sysmon
// preempts a goroutine after 10 ms on a P with a signal, which ends the
// wait with EINTR, and a stop of the world does the same.
package heldp

import (
	"os"
	"runtime"
	"strings"
	"sync/atomic"
)

var held atomic.Int32

// Take reports whether n more loops may keep their Ps while they wait —
// whether a P is left then for the rest of the process — and counts them
// if so; Give gives them back. Otherwise the loops wait as any system
// call does, and the runtime lends their Ps out meanwhile.
func Take(n int) bool {
	if !preemptible {
		return false
	}
	for {
		h := held.Load()
		if int(h)+n >= runtime.GOMAXPROCS(0) {
			return false
		}
		if held.CompareAndSwap(h, h+int32(n)) {
			return true
		}
	}
}

// Give gives back n Ps that Take counted.
func Give(n int) { held.Add(-int32(n)) }

// Held is how many Ps the loops keep now.
func Held() int { return int(held.Load()) }

// Refuse makes every Take fail until restore is called: for tests of the
// loops that wait the runtime's way.
func Refuse() (restore func()) {
	const all = 1 << 20
	held.Add(all)
	return func() { held.Add(-all) }
}

// preemptible reports whether async preemption is on. The runtime stops a
// goroutine that runs too long, or for a stop of the world, with a signal,
// which ends a kept P's wait with EINTR. GODEBUG=asyncpreemptoff=1 turns the
// signal off: then a stop of the world would wait for the wait to end
// (forever, for an idle loop), so no loop keeps its P.
var preemptible = asyncPreempt(os.Getenv("GODEBUG"))

// asyncPreempt reads GODEBUG as the runtime does: the last setting of
// asyncpreemptoff counts.
func asyncPreempt(godebug string) bool {
	on := true
	for _, kv := range strings.Split(godebug, ",") {
		if v, ok := strings.CutPrefix(kv, "asyncpreemptoff="); ok {
			on = v != "1"
		}
	}
	return on
}
