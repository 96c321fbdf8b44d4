package cost

import (
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
)

// The generator's CPU quota, read from fixture cgroup trees laid out as a
// pod's would be: cgroup v2 (cpu.max) and v1 (cfs_quota_us / period), with
// the tightest limit along the path winning, and no limit at all.
func TestCPUQuota(t *testing.T) {
	write := func(t *testing.T, root, rel, body string) {
		t.Helper()
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const v2mounts = "29 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n"
	const v1mounts = "30 25 0:27 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n" +
		"31 25 0:28 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n"
	const pod = "/kubepods.slice/kubepods-burstable.slice/pod123/cri-abc"
	for _, tc := range []struct {
		name    string
		mounts  string
		self    string
		files   map[string]string
		want    float64
		limited bool
	}{
		{"v2 limits.cpu 1", v2mounts, "0::" + pod + "\n", map[string]string{
			"sys/fs/cgroup" + pod + "/cpu.max": "100000 100000\n",
		}, 1, true},
		{"v2 parent tighter", v2mounts, "0::" + pod + "\n", map[string]string{
			"sys/fs/cgroup" + pod + "/cpu.max":                                     "max 100000\n",
			"sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/pod123/cpu.max": "50000 100000\n",
		}, 0.5, true},
		{"v2 no limit", v2mounts, "0::" + pod + "\n", map[string]string{
			"sys/fs/cgroup" + pod + "/cpu.max": "max 100000\n",
		}, 0, false},
		{"v1 1.5 CPUs", v1mounts, "4:memory:" + pod + "\n3:cpu,cpuacct:" + pod + "\n", map[string]string{
			"sys/fs/cgroup/cpu,cpuacct" + pod + "/cpu.cfs_quota_us":  "150000\n",
			"sys/fs/cgroup/cpu,cpuacct" + pod + "/cpu.cfs_period_us": "100000\n",
		}, 1.5, true},
		{"v1 unlimited", v1mounts, "3:cpu,cpuacct:/\n", map[string]string{
			"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us":  "-1\n",
			"sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us": "100000\n",
		}, 0, false},
		{"no cgroup files", v2mounts, "0::/\n", nil, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			for rel, body := range tc.files {
				write(t, root, rel, body)
			}
			got, ok := quotaOf(root, []byte(tc.self), []byte(tc.mounts))
			if ok != tc.limited || (ok && got != tc.want) {
				t.Errorf("quota %v, %v; want %v, %v", got, ok, tc.want, tc.limited)
			}
		})
	}
}

func TestParseProcStat(t *testing.T) {
	b := []byte("cpu  100 0 50 800 50 0 0 0 0 0\ncpu0 50 0 25 400 25 0 0 0 0 0\ncpu1 50 0 25 400 25 0 0 0 0 0\nintr 1 2\n")
	m, err := parseProcStat(b)
	if err != nil {
		t.Fatal(err)
	}
	if m.Online != 2 || m.Busy != 1.5 || m.Total != 10 {
		t.Errorf("parsed %+v, want 2 CPUs, 1.5 s busy of 10 s", m)
	}
	later := MachineCPU{Busy: m.Busy + 9.5, Total: m.Total + 10, Online: 2}
	if c := MachineBetween(m, later); c == nil || c.Utilization != 0.95 || !c.Saturated || c.BusyCores != 1.9 {
		t.Errorf("between: %+v, want 95%% busy, 1.9 cores, saturated", c)
	}
	for _, bad := range []string{"", "intr 1\n", "cpu x 1 2 3\n"} {
		if _, err := parseProcStat([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestParseStatusMemory(t *testing.T) {
	rss, peak, ok := parseStatusMemory([]byte("Name:\tloadgen\nVmHWM:\t  9000 kB\nVmRSS:\t  4000 kB\n"))
	if !ok || rss != 4000<<10 || peak != 9000<<10 {
		t.Errorf("rss %d peak %d ok %v", rss, peak, ok)
	}
	if _, _, ok := parseStatusMemory([]byte("Name: x\n")); ok {
		t.Error("no VmRSS: want not ok")
	}
}

// Resetting the peak works where the kernel allows it, and then the peak
// read back is not the process's lifetime peak.
func TestResetPeakRSS(t *testing.T) {
	big := make([]byte, 64<<20)
	for i := range big {
		big[i] = 1
	}
	_, before, ok := SelfMemory()
	if !ok {
		t.Skip("no /proc/self/status")
	}
	big = nil
	debug.FreeOSMemory()
	if !ResetPeakRSS() {
		t.Skip("the kernel refuses /proc/self/clear_refs here")
	}
	rss, after, _ := SelfMemory()
	if after > before-32<<20 || after < rss {
		t.Errorf("peak %d after the reset (rss %d), %d before the 64 MiB were freed: the reset must forget them", after, rss, before)
	}
}
