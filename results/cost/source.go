package cost

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// reading is one sample of a selection.
type reading struct {
	at    time.Time
	cpu   float64 // CPU seconds spent since the first reading
	mem   int64   // bytes
	procs int
}

// source takes readings of one selection. The first read of a source fails
// when the selection matches nothing; later reads report what is left.
type source interface {
	read() (reading, error)
}

func newSource(sel Selector) (source, error) {
	if err := sel.validate(); err != nil {
		return nil, err
	}
	if sel.Cgroup != "" {
		return newCgroupSource(sel.Cgroup)
	}
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("cost: reading processes needs Linux's /proc (this is %s)", runtime.GOOS)
	}
	return &procSource{sel: sel, known: map[procKey]*proc{}}, nil
}

// procKey is a process's identity: a pid is reused, a pid and a start time
// are not.
type procKey struct {
	pid   int
	start uint64
}

// proc is what a procSource remembers of one process.
type proc struct {
	base, last uint64 // CPU ticks at first sight (0 if born in the window) and at the last reading
	alive      bool
}

// procSource reads processes from /proc: by pid, pid tree or name. Every
// process seen in the window stays in known, so one that exits keeps the
// CPU it was last seen with.
type procSource struct {
	sel        Selector
	known      map[procKey]*proc
	started    bool
	startTicks uint64                // boot clock at the first reading
	names      map[int]*nameDecision // Name: decisions by pid, kept while comm is unchanged
	scan       uint64                // Name: count of scans, to forget pids gone
	scanPPIDs  bool                  // Children: no children files, scan /proc for parents
	r          procReader
}

type nameDecision struct {
	comm  string
	match bool
	scan  uint64 // last scan that saw the pid
}

func (s *procSource) read() (reading, error) {
	first := !s.started
	if first {
		if b, err := os.ReadFile("/proc/uptime"); err == nil {
			s.startTicks, _ = parseUptime(b)
		}
	}
	pids, err := s.candidates(first)
	if err != nil {
		return reading{}, err
	}
	for _, p := range s.known {
		p.alive = false
	}
	r := reading{at: time.Now()}
	var missing []int
	seen := map[int]bool{}
	listed := len(pids)
	for i := 0; i < len(pids); i++ { // pids grows when Children finds descendants
		pid := pids[i]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		st, err := s.r.stat(pid)
		if err != nil {
			if i < listed {
				// A descendant that ended between its parent's children
				// file and its own stat is not missing: it is gone.
				missing = append(missing, pid)
			}
			continue
		}
		key := procKey{pid, st.start}
		p := s.known[key]
		if p == nil {
			if !first && len(s.sel.PIDs) > 0 && !s.sel.Children {
				// A listed pid now names another process: the one we
				// watched is gone.
				continue
			}
			if !first && s.sel.Children && !s.isDescendant(st.ppid) {
				continue
			}
			p = &proc{base: st.cpu}
			if !first && s.startTicks > 0 && st.start >= s.startTicks {
				p.base = 0 // born in the window: all its CPU is the window's
			}
			s.known[key] = p
		}
		p.alive = true
		p.last = max(p.last, st.cpu, p.base)
		r.procs++
		r.mem += s.r.rss(pid)
		if s.sel.Children {
			pids = append(pids, s.childrenOf(pid)...)
		}
	}
	if first {
		if err := s.firstError(missing, r.procs); err != nil {
			return reading{}, err
		}
		s.started = true
	}
	var ticks uint64
	for _, p := range s.known {
		ticks += p.last - p.base
	}
	r.cpu = float64(ticks) / clockTicks
	return r, nil
}

// candidates are the pids to read now.
func (s *procSource) candidates(first bool) ([]int, error) {
	if s.sel.Name != "" {
		return s.matchName()
	}
	if first {
		return append([]int(nil), s.sel.PIDs...), nil
	}
	pids := make([]int, 0, len(s.known))
	for k, p := range s.known {
		if p.alive {
			pids = append(pids, k.pid)
		}
	}
	return pids, nil
}

// isDescendant tells whether a new process's parent is one we watch (then
// so is the process). It is asked only for processes found as children.
func (s *procSource) isDescendant(ppid int) bool {
	for k, p := range s.known {
		if k.pid == ppid && p.alive {
			return true
		}
	}
	return false
}

func (s *procSource) childrenOf(pid int) []int {
	if !s.scanPPIDs {
		kids, ok := s.r.childrenOf(pid)
		if ok {
			return kids
		}
		s.scanPPIDs = true
	}
	all, err := listPIDs()
	if err != nil {
		return nil
	}
	var kids []int
	for _, c := range all {
		if st, err := s.r.stat(c); err == nil && st.ppid == pid {
			kids = append(kids, c)
		}
	}
	return kids
}

// matchName lists the processes called s.sel.Name now. A process's match is
// remembered while its comm stays the same, so /proc/PID/exe is read once
// per process, not once per reading.
func (s *procSource) matchName() ([]int, error) {
	all, err := listPIDs()
	if err != nil {
		return nil, err
	}
	if s.names == nil {
		s.names = make(map[int]*nameDecision, len(all))
	}
	s.scan++
	var pids []int
	for _, pid := range all {
		comm, err := s.r.comm(pid)
		if err != nil {
			continue
		}
		d := s.names[pid]
		if d == nil || d.comm != string(comm) {
			c := string(comm)
			exe, exeErr := "", error(nil)
			if c != s.sel.Name {
				exe, exeErr = exeBase(pid)
			}
			d = &nameDecision{comm: c, match: nameMatches(s.sel.Name, c, exe, exeErr)}
			s.names[pid] = d
		}
		d.scan = s.scan
		if d.match {
			pids = append(pids, pid)
		}
	}
	for pid, d := range s.names {
		if d.scan != s.scan {
			delete(s.names, pid)
		}
	}
	return pids, nil
}

// firstError is the error of a first reading that found too little: a
// listed pid that is not running, or no process at all.
func (s *procSource) firstError(missing []int, found int) error {
	if s.sel.Name != "" {
		if found > 0 {
			return nil
		}
		hint := ""
		if _, err := strconv.Atoi(s.sel.Name); err == nil {
			hint = fmt.Sprintf(" (for process id %s write pid:%s)", s.sel.Name, s.sel.Name)
		}
		return fmt.Errorf("no process named %q is running%s", s.sel.Name, hint)
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("no process with pid %d is running", missing[0])
	}
	ss := make([]string, len(missing))
	for i, p := range missing {
		ss[i] = strconv.Itoa(p)
	}
	return fmt.Errorf("no processes with pids %s are running", strings.Join(ss, ", "))
}
