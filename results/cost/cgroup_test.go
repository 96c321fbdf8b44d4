package cost

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// mountinfo of a hybrid host (v1 controllers and a v2 "unified" tree) and of
// a pure v2 one.
const (
	mountinfoHybrid = `22 1 0:20 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
25 22 0:23 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:9 - tmpfs tmpfs ro,mode=755
26 25 0:24 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw,nsdelegate
29 25 0:27 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid,nodev,noexec,relatime shared:13 - cgroup cgroup rw,cpu,cpuacct
30 25 0:28 / /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime shared:14 - cgroup cgroup rw,memory
31 25 0:29 / /sys/fs/cgroup/pids rw,nosuid,nodev,noexec,relatime shared:15 - cgroup cgroup rw,pids
40 25 0:30 / /sys/fs/cgroup/odd\040dir rw shared:16 - cgroup cgroup rw,blkio
`
	mountinfoV2 = `24 1 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
`
)

func TestParseMountinfo(t *testing.T) {
	got := parseMountinfo([]byte(mountinfoHybrid))
	want := []cgroupMount{
		{point: "/sys/fs/cgroup/unified", v2: true},
		{point: "/sys/fs/cgroup/cpu,cpuacct", controllers: []string{"rw", "cpu", "cpuacct"}},
		{point: "/sys/fs/cgroup/memory", controllers: []string{"rw", "memory"}},
		{point: "/sys/fs/cgroup/pids", controllers: []string{"rw", "pids"}},
		{point: "/sys/fs/cgroup/odd dir", controllers: []string{"rw", "blkio"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseMountinfo(hybrid) =\n%#v\nwant\n%#v", got, want)
	}
	if got := parseMountinfo([]byte(mountinfoV2)); len(got) != 1 || !got[0].v2 || got[0].point != "/sys/fs/cgroup" {
		t.Errorf("parseMountinfo(v2) = %#v", got)
	}
}

func TestSiblingDir(t *testing.T) {
	hybrid, v2 := parseMountinfo([]byte(mountinfoHybrid)), parseMountinfo([]byte(mountinfoV2))
	for _, tc := range []struct {
		mounts          []cgroupMount
		dir, controller string
		want            string
	}{
		{hybrid, "/sys/fs/cgroup/memory/docker/abc", "cpuacct", "/sys/fs/cgroup/cpu,cpuacct/docker/abc"},
		{hybrid, "/sys/fs/cgroup/cpu,cpuacct/docker/abc", "memory", "/sys/fs/cgroup/memory/docker/abc"},
		{hybrid, "/sys/fs/cgroup/cpu,cpuacct", "memory", "/sys/fs/cgroup/memory"},
		{hybrid, "/sys/fs/cgroup/memory/x", "cpuacct", "/sys/fs/cgroup/cpu,cpuacct/x"},
		{hybrid, "/sys/fs/cgroup/memoryx/y", "cpuacct", ""}, // not under /sys/fs/cgroup/memory
		{hybrid, "/sys/fs/cgroup/unified/x", "memory", ""},  // v2: no siblings
		{hybrid, "/tmp/x", "memory", ""},
		{v2, "/sys/fs/cgroup/system.slice/nginx.service", "memory", ""},
	} {
		if got := siblingDir(tc.mounts, tc.dir, tc.controller); got != tc.want {
			t.Errorf("siblingDir(%s, %s) = %q, want %q", tc.dir, tc.controller, got, tc.want)
		}
	}
}

const (
	cpuStatV2 = "usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\nnr_periods 0\n"
	memStatV2 = "anon 104857600\nfile 20971520\nactive_file 10485760\ninactive_file 8388608\nslab 1048576\n"
	memStatV1 = "cache 20971520\nrss 104857600\ninactive_file 1\ntotal_rss 104857600\ntotal_inactive_file 8388608\n"
)

func TestStatValue(t *testing.T) {
	for _, tc := range []struct {
		text, key string
		want      uint64
		ok        bool
	}{
		{cpuStatV2, "usage_usec", 2500000, true},
		{cpuStatV2, "user_usec", 2000000, true},
		{cpuStatV2, "usage", 0, false},
		{memStatV1, "inactive_file", 1, true},
		{memStatV1, "total_inactive_file", 8388608, true},
		{"usage_usec x\n", "usage_usec", 0, false},
		{"", "usage_usec", 0, false},
	} {
		got, ok := statValue([]byte(tc.text), tc.key)
		if got != tc.want || ok != tc.ok {
			t.Errorf("statValue(%q) = %d %v, want %d %v", tc.key, got, ok, tc.want, tc.ok)
		}
	}
}

func TestWorkingSet(t *testing.T) {
	const usage = 130 << 20
	if got := workingSet(usage, []byte(memStatV2), true); got != usage-8388608 {
		t.Errorf("v2 working set = %d", got)
	}
	if got := workingSet(usage, []byte(memStatV1), false); got != usage-8388608 {
		t.Errorf("v1 working set = %d (must subtract total_inactive_file, not inactive_file)", got)
	}
	if got := workingSet(1000, []byte(memStatV2), true); got != 0 {
		t.Errorf("working set below zero: %d", got)
	}
	if got := workingSet(1000, nil, true); got != 1000 {
		t.Errorf("working set without memory.stat = %d", got)
	}
}

// writeFiles makes a directory tree of fixture files.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A cgroup source reads fixture directories laid out as v2 and v1 cgroups:
// CPU is the counter's growth, memory the working set, processes are
// counted in child cgroups too.
func TestCgroupSourceFixtures(t *testing.T) {
	for _, tc := range []struct {
		name         string
		files        map[string]string
		grow         map[string]string // the files after some work
		wantCPU      float64
		wantMem      int64
		wantProcs    int
		wantMemAfter int64
	}{{
		name: "v2",
		files: map[string]string{
			"cpu.stat": cpuStatV2, "memory.current": "125829120\n", "memory.stat": memStatV2,
			"cgroup.procs": "", "pod/cgroup.procs": "10\n11\n", "pod/c1/cgroup.procs": "12\n",
		},
		grow:      map[string]string{"cpu.stat": "usage_usec 4000000\n", "memory.current": "8388608\n"},
		wantCPU:   1.5,
		wantMem:   125829120 - 8388608,
		wantProcs: 3,
	}, {
		name: "v1",
		files: map[string]string{
			"cpuacct.usage": "5000000000\n", "memory.usage_in_bytes": "125829120\n", "memory.stat": memStatV1,
			"cgroup.procs": "7\n",
		},
		grow:      map[string]string{"cpuacct.usage": "5250000000\n"},
		wantCPU:   0.25,
		wantMem:   125829120 - 8388608,
		wantProcs: 1,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tc.files)
			src, err := newCgroupSource(dir)
			if err != nil {
				t.Fatal(err)
			}
			r0, err := src.read()
			if err != nil {
				t.Fatal(err)
			}
			if r0.cpu != 0 || r0.mem != tc.wantMem || r0.procs != tc.wantProcs {
				t.Errorf("first reading %+v, want cpu 0, mem %d, %d processes", r0, tc.wantMem, tc.wantProcs)
			}
			writeFiles(t, dir, tc.grow)
			r1, err := src.read()
			if err != nil {
				t.Fatal(err)
			}
			if abs(r1.cpu-tc.wantCPU) > 1e-9 {
				t.Errorf("cpu after growth = %v s, want %v", r1.cpu, tc.wantCPU)
			}
			// Removed: the reading keeps the CPU and has nothing running.
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			r2, _ := src.read()
			if abs(r2.cpu-tc.wantCPU) > 1e-9 || r2.mem != 0 || r2.procs != 0 {
				t.Errorf("reading of a removed cgroup %+v, want cpu %v and nothing else", r2, tc.wantCPU)
			}
		})
	}
}

func TestCgroupSourceErrors(t *testing.T) {
	for _, tc := range []struct {
		files map[string]string
		want  string
	}{
		{map[string]string{"cpu.stat": "nr_periods 0\n", "memory.current": "1\n"}, "no CPU counter"},
		{map[string]string{"cpu.stat": cpuStatV2}, "no memory counter"},
		{map[string]string{"cpu.stat": cpuStatV2, "memory.current": "1\n", "memory.stat": "", "cgroup.procs": ""}, "holds no processes"},
		{map[string]string{"cpuacct.usage": "x\n", "memory.usage_in_bytes": "1\n", "memory.stat": "", "cgroup.procs": "1\n"}, "cpuacct.usage"},
	} {
		dir := t.TempDir()
		writeFiles(t, dir, tc.files)
		err := Selector{Cgroup: dir}.Resolve()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Resolve(%v) = %v, want %q", tc.files, err, tc.want)
		}
	}
}

func abs(x float64) float64 { return max(x, -x) }
