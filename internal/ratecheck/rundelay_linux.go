package ratecheck

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// runDelay is how long the threads of this process have waited on a run
// queue, ready but not running (the second field of each thread's
// /proc/self/task/*/schedstat). A thread that exits takes its share along,
// which only makes the excuse smaller.
func runDelay() time.Duration {
	paths, _ := filepath.Glob("/proc/self/task/*/schedstat")
	var sum time.Duration
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) < 2 {
			continue
		}
		if ns, err := strconv.ParseInt(f[1], 10, 64); err == nil {
			sum += time.Duration(ns)
		}
	}
	return sum
}
