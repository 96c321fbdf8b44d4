package cost

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// Trees groups pids by the topmost of them each descends from (an nginx
// master and its workers are one tree): each tree's root first, then the
// rest in order, trees in the order of their roots.
func Trees(pids []int) [][]int {
	in := map[int]bool{}
	for _, p := range pids {
		in[p] = true
	}
	byRoot := map[int][]int{}
	for _, p := range pids {
		root := p
		for i := 0; i < 64; i++ { // a pid's ancestors, within the set
			pp, err := Parent(root)
			if err != nil || !in[pp] || pp == root {
				break
			}
			root = pp
		}
		byRoot[root] = append(byRoot[root], p)
	}
	var roots []int
	for r := range byRoot {
		roots = append(roots, r)
	}
	slices.Sort(roots)
	var out [][]int
	for _, r := range roots {
		t := slices.DeleteFunc(byRoot[r], func(p int) bool { return p == r })
		slices.Sort(t)
		out = append(out, append([]int{r}, t...))
	}
	return out
}

// Listeners are the processes holding a TCP socket that listens on port,
// in the calling goroutine's network namespace, from /proc/net/tcp{,6} and
// each process's file descriptors; nil when that cannot be told.
func Listeners(port int) map[int]bool {
	if port <= 0 || port > 65535 {
		return nil
	}
	want := fmt.Sprintf(":%04X", port)
	inodes := map[string]bool{}
	// This thread's network namespace, where the load is sent from:
	// /proc/net is the thread group leader's, which a netns dialer
	// elsewhere in the process may have moved.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, f := range []string{"/proc/thread-self/net/tcp", "/proc/thread-self/net/tcp6"} {
		fh, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fs := strings.Fields(sc.Text())
			if len(fs) > 9 && strings.HasSuffix(fs[1], want) && fs[3] == "0A" { // TCP_LISTEN
				inodes["socket:["+fs[9]+"]"] = true
			}
		}
		fh.Close()
	}
	if len(inodes) == 0 {
		return nil
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	out := map[int]bool{}
	for _, e := range procs {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		fds, err := os.ReadDir("/proc/" + e.Name() + "/fd")
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if l, err := os.Readlink("/proc/" + e.Name() + "/fd/" + fd.Name()); err == nil && inodes[l] {
				out[pid] = true
				break
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
