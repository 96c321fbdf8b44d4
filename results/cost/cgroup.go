package cost

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// cgroupSource reads a cgroup's own counters: the kernel's CPU and memory
// accounting of every process that is or was in it, so nothing is lost to
// processes that exit between readings.
type cgroupSource struct {
	dir string
	// CPU: v2 cpu.stat usage_usec, or v1 cpuacct.usage (nanoseconds).
	cpuFile string
	cpuV2   bool
	// Memory: v2 memory.current − memory.stat inactive_file, or v1
	// memory.usage_in_bytes − memory.stat total_inactive_file.
	memFile, memStat string
	memV2            bool

	started bool
	prevCPU float64 // the counter at the last reading, seconds
	cpu     float64 // seconds spent since the first reading
}

func newCgroupSource(dir string) (*cgroupSource, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("cgroup %q: no such directory", dir)
	}
	s := &cgroupSource{dir: dir}
	var mounts []cgroupMount
	if b, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		mounts = parseMountinfo(b)
	}
	for _, d := range []string{dir, siblingDir(mounts, dir, "cpuacct")} {
		if d == "" {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(d, "cpu.stat")); err == nil {
			if _, ok := statValue(b, "usage_usec"); ok {
				s.cpuFile, s.cpuV2 = filepath.Join(d, "cpu.stat"), true
				break
			}
		}
		if _, err := os.Stat(filepath.Join(d, "cpuacct.usage")); err == nil {
			s.cpuFile = filepath.Join(d, "cpuacct.usage")
			break
		}
	}
	for _, d := range []string{dir, siblingDir(mounts, dir, "memory")} {
		if d == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "memory.current")); err == nil {
			s.memFile, s.memStat, s.memV2 = filepath.Join(d, "memory.current"), filepath.Join(d, "memory.stat"), true
			break
		}
		if _, err := os.Stat(filepath.Join(d, "memory.usage_in_bytes")); err == nil {
			s.memFile, s.memStat = filepath.Join(d, "memory.usage_in_bytes"), filepath.Join(d, "memory.stat")
			break
		}
	}
	switch {
	case s.cpuFile == "":
		return nil, fmt.Errorf("cgroup %q: no CPU counter (cpu.stat usage_usec, or cpuacct.usage in the cpuacct hierarchy)", dir)
	case s.memFile == "":
		return nil, fmt.Errorf("cgroup %q: no memory counter (memory.current, or memory.usage_in_bytes in the memory hierarchy); the root cgroup has none, and on v2 the memory controller must be enabled for it", dir)
	}
	return s, nil
}

func (s *cgroupSource) read() (reading, error) {
	r := reading{at: time.Now()}
	cpu, cpuErr := s.readCPU()
	mem, memErr := s.readMem()
	r.procs = countProcs(s.dir)
	if !s.started {
		if err := errors.Join(cpuErr, memErr); err != nil {
			return reading{}, fmt.Errorf("cgroup %q: %w", s.dir, err)
		}
		if r.procs == 0 {
			return reading{}, fmt.Errorf("cgroup %q holds no processes", s.dir)
		}
		s.started, s.prevCPU = true, cpu
	}
	if cpuErr == nil {
		if cpu >= s.prevCPU {
			s.cpu += cpu - s.prevCPU
		} else {
			s.cpu += cpu // the cgroup was removed and made again: a new counter
		}
		s.prevCPU = cpu
	}
	r.cpu = s.cpu
	if memErr == nil {
		r.mem = mem
	}
	return r, nil
}

// readCPU is the cgroup's CPU counter in seconds.
func (s *cgroupSource) readCPU() (float64, error) {
	b, err := os.ReadFile(s.cpuFile)
	if err != nil {
		return 0, err
	}
	if s.cpuV2 {
		us, ok := statValue(b, "usage_usec")
		if !ok {
			return 0, fmt.Errorf("%s: no usage_usec", s.cpuFile)
		}
		return float64(us) / 1e6, nil
	}
	ns, err := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", s.cpuFile, err)
	}
	return float64(ns) / 1e9, nil
}

// readMem is the cgroup's working set, as the kubelet and cAdvisor count
// it: the memory charged to it less the page cache it could give back.
func (s *cgroupSource) readMem() (int64, error) {
	b, err := os.ReadFile(s.memFile)
	if err != nil {
		return 0, err
	}
	usage, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", s.memFile, err)
	}
	st, err := os.ReadFile(s.memStat)
	if err != nil {
		return 0, err
	}
	return workingSet(usage, st, s.memV2), nil
}

// workingSet is usage less the inactive file pages of memory.stat, never
// below zero.
func workingSet(usage int64, memStat []byte, v2 bool) int64 {
	key := "total_inactive_file" // v1: hierarchical, including child cgroups
	if v2 {
		key = "inactive_file"
	}
	if inactive, ok := statValue(memStat, key); ok {
		usage -= int64(inactive)
	}
	return max(usage, 0)
}

// statValue finds "key value" in a flat-keyed cgroup file (cpu.stat,
// memory.stat).
func statValue(b []byte, key string) (uint64, bool) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if !ok || k != key {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		return n, err == nil
	}
	return 0, false
}

// countProcs counts the processes in dir and the cgroups below it (a
// cgroup.procs lists only its own members).
func countProcs(dir string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // vanished while walking: skip it
		}
		if d.IsDir() {
			return nil
		}
		if d.Name() != "cgroup.procs" {
			return nil
		}
		if b, err := os.ReadFile(path); err == nil {
			n += bytes.Count(b, []byte("\n"))
		}
		return nil
	})
	return n
}

// cgroupMount is a cgroup filesystem from /proc/self/mountinfo.
type cgroupMount struct {
	point       string
	v2          bool
	controllers []string // v1: the super options naming controllers (cpu, cpuacct, memory …)
}

// parseMountinfo lists the cgroup and cgroup2 mounts in a mountinfo text:
// "id parent maj:min root point options [optional…] - fstype source superoptions".
func parseMountinfo(b []byte) []cgroupMount {
	var ms []cgroupMount
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := -1
		for i, x := range f {
			if x == "-" && i >= 6 {
				sep = i
				break
			}
		}
		if sep < 0 || len(f) < sep+2 {
			continue
		}
		m := cgroupMount{point: unescapeMount(f[4])}
		switch f[sep+1] {
		case "cgroup2":
			m.v2 = true
		case "cgroup":
			if len(f) > sep+3 {
				m.controllers = strings.Split(f[sep+3], ",")
			}
		default:
			continue
		}
		ms = append(ms, m)
	}
	return ms
}

// unescapeMount undoes mountinfo's octal escapes (\040 is a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// siblingDir is, for a directory in a v1 cgroup hierarchy, the directory at
// the same path in the hierarchy of controller ("" if there is none, or if
// dir is not in a v1 hierarchy). Container runtimes place a container at the
// same path in every hierarchy.
func siblingDir(mounts []cgroupMount, dir, controller string) string {
	var at *cgroupMount
	for i, m := range mounts {
		if within(dir, m.point) && (at == nil || len(m.point) > len(at.point)) {
			at = &mounts[i]
		}
	}
	if at == nil || at.v2 {
		return ""
	}
	rel, err := filepath.Rel(at.point, dir)
	if err != nil {
		return ""
	}
	for _, m := range mounts {
		if m.v2 {
			continue
		}
		for _, c := range m.controllers {
			if c == controller {
				return filepath.Join(m.point, rel)
			}
		}
	}
	return ""
}

// within tells whether path is dir or below it.
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
}
