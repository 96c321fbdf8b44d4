//go:build linux

package proxyproc

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"syscall"
)

// SysProcAttr puts the proxy in a process group of its own (the workers it
// forks join it), so they can be found even when it dies first; has the
// kernel send it SIGTERM if the thread that started it ends (see launch);
// and, with u, runs it as u with no supplementary groups.
func SysProcAttr(u *User) *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if u != nil {
		a.Credential = &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: []uint32{}}
	}
	return a
}

// supported returns nil: processes are run and watched through /proc and
// process groups.
func supported() error { return nil }

// Kill sends SIGKILL to one process.
func Kill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// Children lists the live pids whose parent is ppid, ascending.
func Children(ppid int) ([]int, error) {
	return scan(func(st Stat) bool { return st.PPID == ppid })
}

// GroupMembers lists the live pids of process group pgid, ascending: a
// proxy and its workers, also workers orphaned by a proxy that died.
func GroupMembers(pgid int) ([]int, error) {
	return scan(func(st Stat) bool { return st.PGRP == pgid })
}

// Alive reports whether pid is a live (not zombie) process named comm.
func Alive(pid int, comm string) bool {
	st, ok := ReadStat(pid)
	return ok && st.State != 'Z' && st.Comm == comm
}

// scan lists the live (not zombie) pids whose /proc/PID/stat matches.
func scan(match func(Stat) bool) ([]int, error) {
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
		if st, ok := ReadStat(pid); ok && st.State != 'Z' && match(st) {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	return pids, nil
}

// Stat is the head of /proc/PID/stat.
type Stat struct {
	Comm  string
	State byte
	PPID  int
	PGRP  int
}

// ReadStat parses /proc/PID/stat: "pid (comm) state ppid pgrp ...", where
// comm may itself hold spaces and parentheses, so it ends at the last ')'.
func ReadStat(pid int) (Stat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, false
	}
	open, end := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return Stat{}, false
	}
	fields := bytes.Fields(b[end+1:])
	if len(fields) < 3 || len(fields[0]) != 1 {
		return Stat{}, false
	}
	ppid, err1 := strconv.Atoi(string(fields[1]))
	pgrp, err2 := strconv.Atoi(string(fields[2]))
	if err1 != nil || err2 != nil {
		return Stat{}, false
	}
	return Stat{Comm: string(b[open+1 : end]), State: fields[0][0], PPID: ppid, PGRP: pgrp}, true
}
