package loadgen

import (
	"bufio"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"loadgen/results"
	"loadgen/results/cost"
)

// usage is a reading of this process's CPU time and of the machine's.
type usage struct {
	user, sys time.Duration
	at        time.Time
	machine   cost.MachineCPU
	machineOK bool
}

func readUsage() usage {
	var ru syscall.Rusage
	u := usage{at: time.Now()}
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		u.user = time.Duration(ru.Utime.Nano())
		u.sys = time.Duration(ru.Stime.Nano())
	}
	u.machine, u.machineOK = readMachine()
	return u
}

func readMachine() (cost.MachineCPU, bool) {
	m, err := cost.ReadMachineCPU()
	return m, err == nil
}

// AllowedCPUs is what a generator of this configuration may use, as its
// Cost.CPUs will say: its Procs (0: GOMAXPROCS), capped by the CPUs it
// may run on and by its CPUQuota (0: the cgroup's, read now).
func (c Config) AllowedCPUs() float64 {
	procs, quota := c.Procs, c.CPUQuota
	if procs <= 0 {
		procs = runtime.GOMAXPROCS(0)
	}
	if quota == 0 {
		quota, _ = cost.CPUQuota()
	}
	return allowedCPUs(procs, quota)
}

// allowedCPUs is what the generator may use: its Procs, capped by the CPUs
// it may run on (runtime.NumCPU honours the affinity mask) and by its
// cgroup's CPU quota.
func allowedCPUs(procs int, quota float64) float64 {
	c := float64(min(procs, runtime.NumCPU()))
	if quota > 0 && quota < c {
		c = quota
	}
	return c
}

// generatorCost is what the generator spent between two readings, against
// the CPUs it was allowed.
func generatorCost(from, to usage, procs int, quota float64, peakRSS int64) results.Cost {
	c := results.Cost{
		UserSeconds: (to.user - from.user).Seconds(),
		SysSeconds:  (to.sys - from.sys).Seconds(),
		PeakRSS:     peakRSS,
		CPUs:        allowedCPUs(procs, quota),
		Quota:       quota,
	}
	c.CPUSeconds = c.UserSeconds + c.SysSeconds
	wall := to.at.Sub(from.at)
	if wall > 0 && c.CPUs > 0 {
		c.Utilization = c.CPUSeconds / (wall.Seconds() * c.CPUs)
	}
	c.Saturated = c.Utilization > results.SaturatedAbove && wall >= results.MinShareWindow
	return c
}

// machineCost is the whole machine's CPU between two readings.
func machineCost(from, to usage) *results.MachineCost {
	if !from.machineOK || !to.machineOK {
		return nil
	}
	return cost.MachineBetween(from.machine, to.machine)
}

// peakMemory tracks the generator's peak RSS over one measured window:
// the kernel's VmHWM reset at the window's start where allowed, otherwise
// the largest RSS sampled by the reporter.
type peakMemory struct {
	reset   bool
	sampled int64
}

func (p *peakMemory) start() {
	p.reset = cost.ResetPeakRSS()
	p.sample()
}

func (p *peakMemory) sample() {
	if rss, _, ok := cost.SelfMemory(); ok {
		p.sampled = max(p.sampled, rss)
	}
}

func (p *peakMemory) peak() int64 {
	rss, hwm, ok := cost.SelfMemory()
	if !ok {
		return p.sampled
	}
	if p.reset {
		return max(hwm, rss)
	}
	return max(p.sampled, rss)
}

// Environment describes this machine and build for the result.
func Environment() results.Env {
	e := results.Env{
		OS:         runtime.GOOS,
		Arch:       runtime.GOARCH,
		NumCPU:     runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		GoVersion:  runtime.Version(),
		Version:    Version(),
	}
	e.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		e.Kernel = strings.TrimSpace(string(b))
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		s := bufio.NewScanner(f)
		for s.Scan() {
			if k, v, ok := strings.Cut(s.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				e.CPUModel = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	return e
}

// version is set at build time: -ldflags "-X loadgen/loadgen.version=v1.2.3".
var version string

// Version is loadgen's version: the one set at build time, the module
// version, or the VCS revision of a development build.
func Version() string {
	if version != "" {
		return version
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 && (v == "" || v == "(devel)") {
			v = s.Value[:12]
		}
	}
	if v == "" {
		v = "devel"
	}
	return v
}
