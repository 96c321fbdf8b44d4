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
)

// usage is a reading of this process's CPU time and peak memory.
type usage struct {
	user, sys time.Duration
	maxRSS    int64
	at        time.Time
}

func readUsage() usage {
	var ru syscall.Rusage
	u := usage{at: time.Now()}
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		u.user = time.Duration(ru.Utime.Nano())
		u.sys = time.Duration(ru.Stime.Nano())
		u.maxRSS = int64(ru.Maxrss) * 1024 // kilobytes on Linux
	}
	return u
}

// cost is what the generator spent between two readings. The CPUs it was
// allowed are GOMAXPROCS, capped by the CPUs it may run on.
func cost(from, to usage) results.Cost {
	c := results.Cost{
		UserSeconds: (to.user - from.user).Seconds(),
		SysSeconds:  (to.sys - from.sys).Seconds(),
		PeakRSS:     to.maxRSS,
		CPUs:        float64(min(runtime.GOMAXPROCS(0), runtime.NumCPU())),
	}
	c.CPUSeconds = c.UserSeconds + c.SysSeconds
	if wall := to.at.Sub(from.at).Seconds(); wall > 0 && c.CPUs > 0 {
		c.Utilization = c.CPUSeconds / (wall * c.CPUs)
	}
	c.Saturated = c.Utilization > results.SaturatedAbove
	return c
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
