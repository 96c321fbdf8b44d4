package sweep

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"loadgen/results/cost"
)

// NameWatches calls every pid: watch without a name by its process's name
// (/proc/PID/comm, made a watch name by WatchName), as docs/sweep.md says.
func (s *Spec) NameWatches() {
	for _, p := range s.Paths {
		w := p.Watch
		if w == nil || w.PID == 0 || w.Name != "" {
			continue
		}
		if comm, err := cost.Comm(w.PID); err == nil {
			w.Name = WatchName(comm)
		}
	}
}

// WatchWarnings looks at the spec's watches before any load: it names its
// pid: watches (NameWatches) and says, path by path, what a name: watch
// matches besides the path's own processes (WatchWarning). A sidecar
// path's is left out: its proxies' own pids replace it once they run
// (SidecarsRunning).
func (s *Spec) WatchWarnings() []string {
	s.NameWatches()
	return s.watchWarnings(Path.WatchWarning)
}

// watchWarnings is WatchWarnings with warn as each path's WatchWarning.
func (s *Spec) watchWarnings(warn func(Path) string) []string {
	var out []string
	for _, p := range s.Paths {
		if p.Watch != nil && p.Watch.Process != "" && p.Sidecar == nil {
			if msg := warn(p); msg != "" {
				out = append(out, msg)
			}
		}
	}
	return out
}

var notNameChars = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// WatchName makes a process name one a watch may have (cpu.NAME): its
// other characters become '-'; "" when nothing is left.
func WatchName(comm string) string {
	return strings.TrimLeft(notNameChars.ReplaceAllString(comm, "-"), "-_.")
}

// WatchWarning says what the path's name: watch matches besides the path's
// own processes: the process trees that do not listen on its URL's port,
// or, when which does cannot be told, that it matches several trees. ""
// when it matches one tree, or nothing (the check before the load says
// so), and for a path without a name: watch.
func (p Path) WatchWarning() string {
	if p.Watch == nil || p.Watch.Process == "" {
		return ""
	}
	pids, err := cost.Named(p.Watch.Process)
	if err != nil || len(pids) == 0 {
		return ""
	}
	var listening map[int]bool
	if p.NetNS == "" {
		listening = listeners(p.URL)
	}
	return p.watchWarning(pids, cost.Trees(pids), listening)
}

// watchWarning is WatchWarning over the watch's pids, their process trees
// and the processes listening on the path's port (nil: not known).
func (p Path) watchWarning(pids []int, trees [][]int, listening map[int]bool) string {
	sel := "name:" + p.Watch.Process
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
			p.Name, sel, pidList(extra), oneOrMore(len(extra), "does", "do"), hostPort(p.URL), oneOrMore(len(extra), "it", "them"),
			pidSelectors(ours), oneOrMore(len(ours), "the one", "the ones"), oneOrMore(len(ours), "its", "their"))
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

// listeners are the processes listening on the port of target (a URL or
// host:port); nil when that cannot be told.
func listeners(target string) map[int]bool {
	_, port, err := net.SplitHostPort(hostPort(target))
	if err != nil {
		return nil
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return nil
	}
	return cost.Listeners(n)
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

// oneOrMore is one when n is 1, more otherwise.
func oneOrMore(n int, one, more string) string {
	if n == 1 {
		return one
	}
	return more
}
