package cost

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// CPUQuota is the CPU limit of this process's cgroup in cores — a pod's
// limits.cpu, docker's --cpus — or false when there is none: cgroup v2's
// cpu.max, v1's cpu.cfs_quota_us over cpu.cfs_period_us, the tightest of
// the process's cgroup and its parents. A generator throttled by a quota
// is saturated at the quota, not at the machine's CPUs.
func CPUQuota() (float64, bool) {
	self, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0, false
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return 0, false
	}
	return quotaOf("/", self, mounts)
}

// quotaOf reads the quota of the cgroup that procCgroup (a
// /proc/PID/cgroup text) names, with the filesystems of mountinfo found
// under root ("/", or a fixture directory in tests).
func quotaOf(root string, procCgroup, mountinfo []byte) (float64, bool) {
	mounts := parseMountinfo(mountinfo)
	best, found := math.Inf(1), false
	sc := bufio.NewScanner(bytes.NewReader(procCgroup))
	for sc.Scan() {
		// "hierarchy-ID:controller-list:path"; v2 is "0::path".
		f := strings.SplitN(sc.Text(), ":", 3)
		if len(f) != 3 {
			continue
		}
		v2 := f[0] == "0" && f[1] == ""
		if !v2 && !hasController(f[1], "cpu") {
			continue
		}
		for _, m := range mounts {
			if m.v2 != v2 || (!v2 && !slices.Contains(m.controllers, "cpu")) {
				continue
			}
			top := filepath.Join(root, m.point)
			for dir := filepath.Join(top, f[2]); within(dir, top); dir = filepath.Dir(dir) {
				if q, ok := dirQuota(dir, v2); ok && q < best {
					best, found = q, true
				}
				if dir == top {
					break
				}
			}
		}
	}
	return best, found
}

// dirQuota is one cgroup directory's own limit, in cores.
func dirQuota(dir string, v2 bool) (float64, bool) {
	if v2 {
		b, err := os.ReadFile(filepath.Join(dir, "cpu.max"))
		if err != nil {
			return 0, false
		}
		f := strings.Fields(string(b)) // "max 100000" or "150000 100000"
		if len(f) != 2 || f[0] == "max" {
			return 0, false
		}
		return ratio(f[0], f[1])
	}
	q, err1 := os.ReadFile(filepath.Join(dir, "cpu.cfs_quota_us"))
	p, err2 := os.ReadFile(filepath.Join(dir, "cpu.cfs_period_us"))
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return ratio(strings.TrimSpace(string(q)), strings.TrimSpace(string(p))) // -1: none
}

func ratio(quota, period string) (float64, bool) {
	q, err1 := strconv.ParseFloat(quota, 64)
	p, err2 := strconv.ParseFloat(period, 64)
	if err1 != nil || err2 != nil || q <= 0 || p <= 0 {
		return 0, false
	}
	return q / p, true
}

func hasController(list, c string) bool { return slices.Contains(strings.Split(list, ","), c) }
