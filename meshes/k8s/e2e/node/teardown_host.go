package node

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// What a node leaves on the host besides its chains: processes, cgroups,
// mounts and pod network namespaces.

// procs lists the machine's pids.
func procs() []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil && pid != os.Getpid() {
			out = append(out, pid)
		}
	}
	return out
}

// matching are the processes whose command line names dir.
func matching(dir string) []int {
	var out []int
	for _, pid := range procs() {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err == nil && strings.Contains(string(b), dir+"/") {
			out = append(out, pid)
		}
	}
	return out
}

func killMatching(dir string) {
	for range 3 {
		pids := matching(dir)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// cgroupDirs are the nodes' cgroup directories in every controller,
// deepest first.
func cgroupDirs(roots []string) []string {
	var out []string
	for _, c := range cgroupControllers() {
		for _, r := range roots {
			root := filepath.Join("/sys/fs/cgroup", c, r)
			_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					out = append(out, path)
				}
				return nil
			})
		}
	}
	sort.Slice(out, func(i, j int) bool { return strings.Count(out[i], "/") > strings.Count(out[j], "/") })
	return out
}

// cgroupPids are the processes in the nodes' cgroups.
func cgroupPids(roots []string) []int {
	seen := map[int]bool{}
	var out []int
	for _, d := range cgroupDirs(roots) {
		b, err := os.ReadFile(filepath.Join(d, "cgroup.procs"))
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && !seen[pid] {
				seen[pid] = true
				out = append(out, pid)
			}
		}
	}
	return out
}

func killCgroups(roots []string) {
	for range 5 {
		pids := cgroupPids(roots)
		if len(pids) == 0 {
			return
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func removeCgroups(roots []string) error {
	var errs []error
	for _, d := range cgroupDirs(roots) {
		var err error
		for range 20 { // a cgroup whose last process just died is busy a moment
			if err = syscall.Rmdir(d); err == nil || errors.Is(err, syscall.ENOENT) {
				err = nil
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("cgroup %s: %w", d, err))
		}
	}
	return errors.Join(errs...)
}

// mounts are the mount points under dir, deepest first: the pods'
// network namespaces among them (containerd pins them under its state
// directory, containerdConfig), so nothing of another cluster's is.
func mounts(dir string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 5 {
			continue
		}
		mp := unescapeMount(fs[4])
		if strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

func unescapeMount(s string) string {
	return strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`).Replace(s)
}

func unmountUnder(dir string) error {
	var errs []error
	for range 3 {
		mps := mounts(dir)
		if len(mps) == 0 {
			return nil
		}
		errs = errs[:0]
		for _, mp := range mps {
			if err := syscall.Unmount(mp, 0); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOENT) {
				if err := syscall.Unmount(mp, syscall.MNT_DETACH); err != nil && !errors.Is(err, syscall.EINVAL) {
					errs = append(errs, fmt.Errorf("unmount %s: %w", mp, err))
				}
			}
			if strings.Contains(mp, "/netns/cni-") {
				_ = os.Remove(mp)
			}
		}
	}
	return errors.Join(errs...)
}

// The iptables tables and chain prefixes the node's components use:
// kube-proxy's and the kubelet's KUBE-*, the CNI plugins' CNI-*.
var (
	chainTables   = []string{"filter", "nat", "mangle"}
	chainPrefixes = []string{"KUBE-", "CNI-"}
)
