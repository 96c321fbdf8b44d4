package cost

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"

	"loadgen/results"
)

// MachineCPU is a reading of the whole machine's CPU time from /proc/stat:
// every process's, the generator's, the target's and the proxies' alike.
type MachineCPU struct {
	Busy, Total float64 // seconds summed over every CPU
	Online      int     // CPUs online (the cpuN lines)
}

// ReadMachineCPU reads /proc/stat.
func ReadMachineCPU() (MachineCPU, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return MachineCPU{}, err
	}
	return parseProcStat(b)
}

// parseProcStat reads the aggregate "cpu" line (user nice system idle
// iowait irq softirq steal …, in USER_HZ ticks) and counts the cpuN lines.
// Idle and iowait are idle; guest time is already inside user.
func parseProcStat(b []byte) (MachineCPU, error) {
	var m MachineCPU
	seen := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || !strings.HasPrefix(f[0], "cpu") {
			continue
		}
		if f[0] != "cpu" {
			m.Online++
			continue
		}
		if len(f) < 5 {
			return m, fmt.Errorf("/proc/stat: short cpu line %q", sc.Text())
		}
		for i, s := range f[1:min(len(f), 9)] {
			v, err := strconv.ParseUint(s, 10, 64)
			if err != nil {
				return m, fmt.Errorf("/proc/stat: cpu field %d: %w", i+1, err)
			}
			t := float64(v) / clockTicks
			m.Total += t
			if i != 3 && i != 4 { // idle, iowait
				m.Busy += t
			}
		}
		seen = true
	}
	if !seen {
		return m, fmt.Errorf("/proc/stat: no cpu line")
	}
	return m, nil
}

// MachineBetween is the machine's CPU use between two readings; nil when
// they do not span any time.
func MachineBetween(from, to MachineCPU) *results.MachineCost {
	total := to.Total - from.Total
	if total <= 0 || to.Online <= 0 {
		return nil
	}
	u := max(0, (to.Busy-from.Busy)/total)
	return &results.MachineCost{
		CPUs:        to.Online,
		BusyCores:   u * float64(to.Online),
		Utilization: u,
		Saturated:   u >= results.SaturatedAbove,
	}
}
