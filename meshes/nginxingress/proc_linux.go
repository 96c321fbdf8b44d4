//go:build linux

package nginxingress

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"syscall"
)

// sysProcAttr puts the master in a process group of its own (its workers
// join it), so its workers can be found even if it dies first, and has the kernel
// send it SIGTERM (nginx's fast shutdown, which stops the workers) if the
// thread that started it dies: see launch.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// supported: nginx is run and watched through /proc and process groups.
func supported() error { return nil }

// kill sends SIGKILL to one process.
func kill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// children lists the live pids whose parent is ppid, ascending.
func children(ppid int) ([]int, error) {
	return scan(func(st stat) bool { return st.ppid == ppid })
}

// groupMembers lists the live pids of process group pgid, ascending: the
// master and its workers, and workers orphaned by a master that died.
func groupMembers(pgid int) ([]int, error) {
	return scan(func(st stat) bool { return st.pgrp == pgid })
}

// scan lists the live (not zombie) pids whose /proc/PID/stat matches.
func scan(match func(stat) bool) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, ok := readStat(pid); ok && st.state != 'Z' && match(st) {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids, nil
}

// alive reports whether pid is a live (not zombie) nginx process.
func alive(pid int) bool {
	st, ok := readStat(pid)
	return ok && st.state != 'Z' && st.comm == "nginx"
}

type stat struct {
	comm  string
	state byte
	ppid  int
	pgrp  int
}

// readStat parses /proc/PID/stat: "pid (comm) state ppid pgrp ...", where comm
// may itself hold spaces and parentheses, so it ends at the last ')'.
func readStat(pid int) (stat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, false
	}
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return stat{}, false
	}
	fields := bytes.Fields(b[end+1:])
	if len(fields) < 3 || len(fields[0]) != 1 {
		return stat{}, false
	}
	ppid, err1 := strconv.Atoi(string(fields[1]))
	pgrp, err2 := strconv.Atoi(string(fields[2]))
	if err1 != nil || err2 != nil {
		return stat{}, false
	}
	return stat{comm: string(b[open+1 : end]), state: fields[0][0], ppid: ppid, pgrp: pgrp}, true
}
