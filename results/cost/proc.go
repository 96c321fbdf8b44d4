package cost

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// clockTicks is USER_HZ, the unit of utime, stime and starttime in
// /proc/PID/stat: sysconf(_SC_CLK_TCK), which is 100 on every Linux
// architecture Go supports (reading it needs cgo; the kernel ABI fixes it).
const clockTicks = 100

// procStat is what we use of /proc/PID/stat.
type procStat struct {
	comm  string
	ppid  int
	cpu   uint64 // utime + stime, clock ticks, all threads (living and exited)
	start uint64 // starttime: clock ticks after boot; with the pid, the process's identity
}

// parseStat reads /proc/PID/stat. The comm (field 2) is in parentheses and
// may itself hold spaces and parentheses, so the fields are counted from the
// last ')'.
func parseStat(b []byte) (procStat, error) {
	open := bytes.IndexByte(b, '(')
	end := bytes.LastIndexByte(b, ')')
	if open < 0 || end < open {
		return procStat{}, errors.New("stat: no (comm)")
	}
	// After ") ": state(3) ppid(4) … utime(14) stime(15) … starttime(22).
	f := strings.Fields(string(b[end+1:]))
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("stat: %d fields after comm, want at least 20", len(f))
	}
	field := func(n int) (uint64, error) { return strconv.ParseUint(f[n-3], 10, 64) }
	ppid, err1 := field(4)
	utime, err2 := field(14)
	stime, err3 := field(15)
	start, err4 := field(22)
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return procStat{}, fmt.Errorf("stat: %w", err)
	}
	return procStat{
		comm:  string(b[open+1 : end]),
		ppid:  int(ppid),
		cpu:   utime + stime,
		start: start,
	}, nil
}

// parseStatm reads the resident set, in pages, from /proc/PID/statm
// ("size resident shared text lib data dt").
func parseStatm(b []byte) (int64, error) {
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, errors.New("statm: want at least 2 fields")
	}
	return strconv.ParseInt(f[1], 10, 64)
}

// parseUptime reads /proc/uptime ("12345.67 23456.78") as clock ticks since
// boot, the clock of starttime.
func parseUptime(b []byte) (uint64, error) {
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 0, errors.New("uptime: empty")
	}
	s, err := strconv.ParseFloat(f[0], 64)
	if err != nil || s < 0 {
		return 0, fmt.Errorf("uptime: %q is not seconds", f[0])
	}
	return uint64(s * clockTicks), nil
}

func procPath(pid int, file string) string {
	return "/proc/" + strconv.Itoa(pid) + "/" + file
}

// procReader reads small /proc files into one buffer: open, one read,
// close — three system calls, where os.ReadFile makes five or six and
// allocates. A source reads many of them every interval. The bytes it
// returns are valid until its next read.
type procReader struct {
	buf []byte
}

// read returns the contents of a small file. /proc files are made whole at
// open (seq_file), so a read shorter than the buffer has all of it.
func (r *procReader) read(path string) ([]byte, error) {
	if r.buf == nil {
		r.buf = make([]byte, 4096)
	}
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	n := 0
	for {
		m, err := syscall.Read(fd, r.buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "read", Path: path, Err: err}
		}
		n += m
		if m == 0 || n < len(r.buf) {
			return r.buf[:n], nil
		}
		r.buf = append(r.buf, make([]byte, len(r.buf))...)
	}
}

func (r *procReader) stat(pid int) (procStat, error) {
	b, err := r.read(procPath(pid, "stat"))
	if err != nil {
		return procStat{}, err
	}
	return parseStat(b)
}

// rss is the resident set of pid in bytes; 0 if it cannot be read (the
// process just exited).
func (r *procReader) rss(pid int) int64 {
	b, err := r.read(procPath(pid, "statm"))
	if err != nil {
		return 0
	}
	pages, err := parseStatm(b)
	if err != nil || pages < 0 {
		return 0
	}
	return pages * int64(os.Getpagesize())
}

// comm is /proc/PID/comm without its newline.
func (r *procReader) comm(pid int) ([]byte, error) {
	b, err := r.read(procPath(pid, "comm"))
	if err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b, []byte("\n")), nil
}

// listPIDs lists the processes (thread-group leaders) in /proc, unsorted.
func listPIDs() ([]int, error) {
	d, err := os.Open("/proc")
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return nil, err
	}
	pids := make([]int, 0, len(names))
	for _, n := range names {
		if n == "" || n[0] < '0' || n[0] > '9' {
			continue
		}
		if p, err := strconv.Atoi(n); err == nil && p > 0 {
			pids = append(pids, p)
		}
	}
	return pids, nil
}

// exeBase is the basename of /proc/PID/exe, without the " (deleted)" the
// kernel appends when the binary was replaced (a package upgrade).
func exeBase(pid int) (string, error) {
	p, err := os.Readlink(procPath(pid, "exe"))
	if err != nil {
		return "", err
	}
	return filepath.Base(strings.TrimSuffix(p, " (deleted)")), nil
}

// commLen is TASK_COMM_LEN − 1: the kernel cuts comm to 15 bytes.
const commLen = 15

// nameMatches tells whether a process with this comm and executable
// (exeErr set when /proc/PID/exe could not be read) is called name.
func nameMatches(name, comm, exe string, exeErr error) bool {
	if comm == name {
		return true
	}
	if exeErr == nil {
		return exe == name
	}
	return len(name) > commLen && comm == name[:commLen]
}

// childrenOf lists the children of pid from /proc/PID/task/TID/children
// (one file per thread: a child belongs to the thread that forked it).
// ok is false when the kernel has no such files (CONFIG_PROC_CHILDREN off).
func (r *procReader) childrenOf(pid int) (kids []int, ok bool) {
	d, err := os.Open(procPath(pid, "task"))
	if err != nil {
		return nil, true // exited: no children to add
	}
	tasks, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, true
	}
	ok = len(tasks) == 0
	for _, t := range tasks {
		b, err := r.read(procPath(pid, "task/"+t+"/children"))
		if err != nil {
			continue
		}
		ok = true
		for f := range strings.FieldsSeq(string(b)) {
			if k, err := strconv.Atoi(f); err == nil && k > 0 {
				kids = append(kids, k)
			}
		}
	}
	return kids, ok
}
