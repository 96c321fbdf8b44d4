package cost

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"loadgen/internal/ratecheck"
)

// ownCgroups lists the directories of this process's cgroups: the v2 one
// and the v1 cpuacct and memory ones, from /proc/self/cgroup and the mounts.
func ownCgroups(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Skip(err)
	}
	mounts := parseMountinfo(b)
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	var dirs []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "hierarchy-id:controller,controller:path"; v2 is "0::path".
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		ctrls := strings.Split(parts[1], ",")
		for _, m := range mounts {
			if parts[1] == "" && m.v2 || !m.v2 && hasAny(m.controllers, ctrls, "cpuacct", "memory") {
				dirs = append(dirs, filepath.Join(m.point, parts[2]))
			}
		}
	}
	return dirs
}

// hasAny tells whether a mount's controllers include one of want that the
// cgroup line names too.
func hasAny(mount, line []string, want ...string) bool {
	for _, w := range want {
		in := func(l []string) bool {
			for _, x := range l {
				if x == w {
					return true
				}
			}
			return false
		}
		if in(mount) && in(line) {
			return true
		}
	}
	return false
}

// The cgroup this process is in counts at least this process's CPU, and
// some memory. A cgroup without readable CPU and memory counters (the v2
// root, a v1 memory cgroup with no cpuacct twin) is passed over; if none
// can be read, the fixture tests above cover the parsing.
func TestOwnCgroup(t *testing.T) {
	var sel Selector
	for _, dir := range ownCgroups(t) {
		err := Selector{Cgroup: dir}.Resolve()
		t.Logf("own cgroup %s: %v", dir, err)
		if err == nil {
			sel = Selector{Cgroup: dir}
			break
		}
	}
	if sel.Cgroup == "" {
		t.Skip("no readable cgroup with both CPU and memory counters")
	}
	probe := ratecheck.StartProbe()
	s, err := Start(sel, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	u0, s0, _ := Self()
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
	}
	u1, s1, _ := Self()
	u := s.Stop()
	stalled := probe.Stop()
	self := (u1 + s1 - u0 - s0).Seconds()
	t.Logf("%s: %+v; this process used %.3f s", sel.Cgroup, u, self)
	if u.CPUSeconds < 0.9*self-0.02 {
		t.Errorf("CPUSeconds = %.3f, less than this process's own %.3f", u.CPUSeconds, self)
	}
	// Samples every 50 ms over 300 ms, the first and last included: at
	// least 3, less the ticks a stall of the machine (an independent
	// probe's) kept the sampler from taking.
	want := 3 - int(stalled/(50*time.Millisecond))
	if u.MemMax <= 0 || u.Processes < 1 || u.Samples < max(2, want) {
		t.Errorf("usage %+v: want memory, ≥ 1 process, ≥ %d samples (the machine stalled the process %v)", u, max(2, want), stalled)
	}
}
