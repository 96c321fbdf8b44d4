package main

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"regexp"
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
	trees := cost.Trees(pids)
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
