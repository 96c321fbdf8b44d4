package cost

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"strings"
)

// ResetPeakRSS sets this process's peak resident set size (VmHWM) to its
// current one, so that a later SelfMemory's peak covers only what came
// after: one run's peak, not the process's lifetime's (every step of a
// sweep would otherwise report the sweep's peak so far). False where the
// kernel does not allow it; then sample SelfMemory's rss instead.
func ResetPeakRSS() bool {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}

// SelfMemory reads this process's resident set size and its peak (VmRSS,
// VmHWM of /proc/self/status) in bytes.
func SelfMemory() (rss, peak int64, ok bool) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, 0, false
	}
	return parseStatusMemory(b)
}

func parseStatusMemory(b []byte) (rss, peak int64, ok bool) {
	var seen int
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, found := strings.Cut(sc.Text(), ":")
		if !found || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		f := strings.Fields(v) // "1234 kB"
		if len(f) != 2 || f[1] != "kB" {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			continue
		}
		if k == "VmRSS" {
			rss = n << 10
		} else {
			peak = n << 10
		}
		seen++
	}
	return rss, peak, seen == 2
}
