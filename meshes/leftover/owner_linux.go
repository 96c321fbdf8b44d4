package leftover

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of a process's start time in
// /proc/PID/stat: 100 on every Linux.
const clockTicks = 100

// reuseSlack is how much later than a leftover's last change its pid's
// process may have started and still be taken for its maker: the boot
// time the start is counted from is in whole seconds.
const reuseSlack = 2 * time.Second

// staleOwner tells whether the process pid, which made a leftover last
// changed at made, is gone or is now another program, and says why.
// What cannot be read (another user's process, no /proc) is taken for
// alive: a leftover is removed only when its maker is surely gone.
func staleOwner(pid int, made time.Time) (why string, stale bool) {
	if pid == os.Getpid() {
		return "", false
	}
	dir := "/proc/" + strconv.Itoa(pid)
	stat, err := os.ReadFile(dir + "/stat")
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Sprintf("pid %d is gone", pid), true
	}
	if err != nil {
		return "", false
	}
	state, start, ok := parseStat(string(stat))
	if ok && state == "Z" {
		return fmt.Sprintf("pid %d has exited", pid), true
	}
	if ok && !made.IsZero() && start.After(made.Add(reuseSlack)) {
		return fmt.Sprintf("pid %d is a process started after it (%s)", pid, start.Format(time.DateTime)), true
	}
	comm, _ := os.ReadFile(dir + "/comm")
	name := strings.TrimSpace(string(comm))
	exe, _ := os.Readlink(dir + "/exe")
	exe = strings.TrimSuffix(exe, " (deleted)")
	if name == "" && exe == "" {
		return "", false
	}
	if isLoadgen(name) || (exe != "" && isLoadgen(filepath.Base(exe))) || sameExecutable(dir+"/exe") {
		return "", false
	}
	return fmt.Sprintf("pid %d is now %s, not loadgen", pid, name), true
}

// isLoadgen tells whether a process or executable name is loadgen's, or a
// Go test binary's (NAME.test: loadgen's tests make leftovers too).
func isLoadgen(name string) bool {
	return strings.Contains(name, "loadgen") || strings.HasSuffix(name, ".test")
}

// sameExecutable tells whether exe (/proc/PID/exe) is the file this
// process runs: a loadgen however it was named.
func sameExecutable(exe string) bool {
	a, err := os.Stat(exe)
	if err != nil {
		return false
	}
	b, err := os.Stat("/proc/self/exe")
	return err == nil && os.SameFile(a, b)
}

// parseStat reads a process's state and start time from /proc/PID/stat.
func parseStat(stat string) (state string, start time.Time, ok bool) {
	i := strings.LastIndexByte(stat, ')') // the name in parentheses may hold spaces
	if i < 0 {
		return "", time.Time{}, false
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 20 {
		return "", time.Time{}, false
	}
	ticks, err := strconv.ParseInt(f[19], 10, 64) // field 22, starttime
	if err != nil {
		return f[0], time.Time{}, false
	}
	boot, ok := bootTime()
	if !ok {
		return f[0], time.Time{}, false
	}
	return f[0], boot.Add(time.Duration(ticks) * time.Second / clockTicks), true
}

// bootTime is when the machine booted, from /proc/stat's btime.
func bootTime() (time.Time, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			s, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return time.Unix(s, 0), err == nil
		}
	}
	return time.Time{}, false
}
