package nginxingress

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"loadgen/targets/tlscert"
)

// MaxSizingCounts and MaxSizingWorkers bound a sizing: how many worker
// counts it measures, and the largest.
const (
	MaxSizingCounts  = 64
	MaxSizingWorkers = 1024
)

// ParseWorkers reads a sizing's worker counts, as --workers gives them:
// "1,2,4" or a range "1..4"; empty is 1..cpus. An error starts with the
// value quoted, for the flag's name to go before it.
func ParseWorkers(s string, cpus int) ([]int, error) {
	if s == "" {
		s = "1.." + strconv.Itoa(cpus)
	}
	var out []int
	if lo, hi, ok := strings.Cut(s, ".."); ok {
		a, err1 := strconv.Atoi(strings.TrimSpace(lo))
		b, err2 := strconv.Atoi(strings.TrimSpace(hi))
		if err1 != nil || err2 != nil || a < 1 || b < a {
			return nil, fmt.Errorf("%q: want a range like 1..4", s)
		}
		if b-a >= MaxSizingCounts { // before the list is built: 1..999999999 holds no memory
			return nil, fmt.Errorf("%q: %d worker counts is more than %d", s, b-a+1, MaxSizingCounts)
		}
		for n := a; n <= b; n++ {
			out = append(out, n)
		}
	} else {
		for _, part := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(part))
			if err != nil || n < 1 {
				return nil, fmt.Errorf("%q: %q is not a worker count (1 or more)", s, part)
			}
			out = append(out, n)
		}
	}
	if len(out) > MaxSizingCounts {
		return nil, fmt.Errorf("%q: %d worker counts is more than %d", s, len(out), MaxSizingCounts)
	}
	for _, n := range out {
		if n > MaxSizingWorkers {
			return nil, fmt.Errorf("%q: %d workers is more than %d", s, n, MaxSizingWorkers)
		}
	}
	return out, nil
}

// OverCPUs is the warning of a sizing whose largest worker count is more
// than the machine's cpus, or "": nginx's workers past them share CPUs
// with each other, the target and the generator.
func OverCPUs(workers []int, cpus int) string {
	if len(workers) == 0 || slices.Max(workers) <= cpus {
		return ""
	}
	of := strconv.Itoa(cpus) + " CPUs"
	if cpus == 1 {
		of = "1 CPU"
	}
	return fmt.Sprintf("--workers up to %d on %s: nginx's workers past %d share CPUs with each other, the target and the generator, so those counts measure contention, not how nginx scales",
		slices.Max(workers), of, cpus)
}

// tlsKind names the sizing's TLS paths: TLS, or mutual TLS.
func tlsKind(mtls bool) string {
	if mtls {
		return "mutual TLS"
	}
	return "TLS"
}

// Planned is where a planned nginx (SizingPlan's) will be, as a dry run
// prints its path before anything starts.
func (p SizingProxy) Planned(mtls bool) string {
	tls := ""
	if p.TLS {
		tls = ", " + tlsKind(mtls) + " with a new connection per request"
	}
	return fmt.Sprintf("nginx, worker_processes %d%s, started by loadgen", p.Workers, tls)
}

// SizingNote is what a sizing's report says of its paths: each nginx
// proxying to the target (pid targetPID), the TLS paths' handshakes with
// key type kt, and, with mtls, the client certificate.
func SizingNote(targetPID int, kt tlscert.KeyType, mtls bool) string {
	mutual := ""
	if mtls {
		mutual = ", mutual: nginx requires and verifies the load's client certificate (" + kt.Describe() + ")"
	}
	return fmt.Sprintf("Each nginx-wN path is a real nginx with worker_processes N proxying to loadgen's httpbin (%d) with kept upstream connections; "+
		"the -tls paths open a new connection with a full %s handshake per request (session cache and tickets off)%s. "+
		"proxy cpu is that nginx's master and workers.", targetPID, kt.Describe(), mutual)
}
