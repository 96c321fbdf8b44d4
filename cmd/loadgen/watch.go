package main

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"loadgen/loadgen/sweep"
	"loadgen/results/cost"
)

// checkWatches looks at a sweep's watches before any load: a pid: watch
// without a name is called by its process's name (/proc/PID/comm), as
// docs/sweep.md says; a name: watch that matches more than the path's own
// processes says so on w, naming the others.
func checkWatches(w io.Writer, spec *sweep.Spec) {
	nameWatches(spec)
	for _, p := range spec.Paths {
		if p.Watch != nil && p.Watch.Process != "" && p.Sidecar == nil {
			if msg := nameWatchWarning(p); msg != "" {
				fmt.Fprint(w, wrap("warning: "+msg, maxWidth, "  "))
			}
		}
	}
}

// nameWatches names every pid: watch that has no name after its process.
func nameWatches(spec *sweep.Spec) {
	for _, p := range spec.Paths {
		w := p.Watch
		if w == nil || w.PID == 0 || w.Name != "" {
			continue
		}
		if comm, err := cost.Comm(w.PID); err == nil {
			w.Name = watchName(comm)
		}
	}
}

var notNameChars = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// watchName makes a process name one a watch may have (cpu.NAME): its
// other characters become '-'; "" when nothing is left.
func watchName(comm string) string {
	return strings.TrimLeft(notNameChars.ReplaceAllString(comm, "-"), "-_.")
}

// nameWatchWarning says what a path's name: watch matches besides the
// path's own processes: the process trees that do not listen on its URL's
// port, or, when which does cannot be told, that it matches several trees.
// "" when it matches one tree, or nothing (the check before the load says
// so).
func nameWatchWarning(p sweep.Path) string {
	sel := "name:" + p.Watch.Process
	pids, err := cost.Named(p.Watch.Process)
	if err != nil || len(pids) == 0 {
		return ""
	}
	trees := processTrees(pids)
	var listening map[int]bool
	if p.NetNS == "" {
		listening = listeners(p.URL)
	}
	var ours, others [][]int
	for _, t := range trees {
		if slices.ContainsFunc(t, func(pid int) bool { return listening[pid] }) {
			ours = append(ours, t)
		} else {
			others = append(others, t)
		}
	}
	switch {
	case len(ours) > 0 && len(others) > 0:
		var extra []int
		for _, t := range others {
			extra = append(extra, t...)
		}
		slices.Sort(extra)
		return fmt.Sprintf("watch %s (%s) also matches %s, which %s not serve %s: its figures would add %s; watch %s instead (%s listening there, with %s children)",
			p.Name, sel, pidList(extra), doOrDoes(len(extra)), hostPort(p.URL), themOrIt(len(extra)), pidSelectors(ours), theOnes(len(ours)), itsOrTheir(len(ours)))
	case len(ours) == 0 && len(trees) > 1:
		var parts []string
		for _, t := range trees {
			s := strconv.Itoa(t[0])
			if len(t) > 1 {
				s += " with " + strings.Trim(strings.Join(strings.Fields(fmt.Sprint(t[1:])), ", "), "[]")
			}
			parts = append(parts, s)
		}
		return fmt.Sprintf("watch %s (%s) matches %d processes in %d process trees (%s): its figures add them all; if not all are this path's proxy, watch its own by pid: %s",
			p.Name, sel, len(pids), len(trees), strings.Join(parts, "; "), pidSelectors(trees))
	}
	return ""
}

// processTrees groups pids by the topmost of them each descends from
// (an nginx master and its workers are one tree): each tree's root first,
// then the rest in order, trees in the order of their roots.
func processTrees(pids []int) [][]int {
	in := map[int]bool{}
	for _, p := range pids {
		in[p] = true
	}
	byRoot := map[int][]int{}
	for _, p := range pids {
		root := p
		for i := 0; i < 64; i++ { // a pid's ancestors, within the set
			pp, err := cost.Parent(root)
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

// listeners are the processes holding a socket that listens on the port
// of target (a URL or host:port), from /proc/net/tcp{,6} and each
// process's file descriptors; nil when that cannot be told.
func listeners(target string) map[int]bool {
	_, port, err := net.SplitHostPort(hostPort(target))
	if err != nil {
		return nil
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil
	}
	want := fmt.Sprintf(":%04X", n)
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

// hostPort is the host:port of a URL, or target as it is.
func hostPort(target string) string {
	if u, err := url.Parse(target); err == nil && u.Host != "" {
		if u.Port() == "" {
			if u.Scheme == "https" {
				return u.Host + ":443"
			}
			return u.Host + ":80"
		}
		return u.Host
	}
	return target
}

func pidList(pids []int) string {
	s := make([]string, len(pids))
	for i, p := range pids {
		s[i] = strconv.Itoa(p)
	}
	if len(pids) == 1 {
		return "pid " + s[0]
	}
	return "pids " + strings.Join(s, ", ")
}

// pidSelectors are the pid: watches of the trees' roots: "pid:1 or pid:2".
func pidSelectors(trees [][]int) string {
	s := make([]string, len(trees))
	for i, t := range trees {
		s[i] = "pid:" + strconv.Itoa(t[0])
	}
	return strings.Join(s, " or ")
}

func doOrDoes(n int) string {
	if n == 1 {
		return "does"
	}
	return "do"
}

func themOrIt(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}

func theOnes(n int) string {
	if n == 1 {
		return "the one"
	}
	return "the ones"
}

func itsOrTheir(n int) string {
	if n == 1 {
		return "its"
	}
	return "their"
}
