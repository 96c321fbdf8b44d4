// Package cost measures what a set of processes spent — CPU and memory —
// during a load run: the proxies of a mesh, an ingress controller, a CNI
// agent. A Sampler reads /proc (or a cgroup's own counters) at a fixed
// interval between Start and Stop and reduces the readings to a Usage, from
// which a report derives figures like Istio's "vCPU and MiB per 1000
// requests/s".
//
// The package reads Linux's /proc and cgroup files; elsewhere Start and
// Resolve return an error. It keeps no state outside a Sampler.
package cost

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Selector picks the processes to watch. Exactly one of PIDs, Name and
// Cgroup is set; Children only goes with PIDs.
type Selector struct {
	// PIDs are these processes (and, with Children, their descendants).
	PIDs []int
	// Name selects every process whose comm (/proc/PID/comm) or executable
	// basename equals Name: "nginx" is the master and all its workers. The
	// kernel keeps only the first 15 bytes of comm, so a longer Name also
	// matches a comm equal to its first 15 bytes when the executable cannot
	// be read (another user's process).
	Name string
	// Cgroup is a cgroup directory whose own counters are read: on v2 a
	// directory under /sys/fs/cgroup; on v1 the cpuacct or the memory
	// directory (the other controller is looked for at the same path in
	// its own hierarchy).
	Cgroup string
	// Children adds the descendants of PIDs, including those born during
	// the window and those reparented after their parent exited.
	Children bool
}

// maxNameLen is NAME_MAX: an executable basename is never longer.
const maxNameLen = 255

// ParseSelector reads a selector as given on the command line:
//
//	pid:123,456                            these processes and their descendants
//	only:123,456                           these processes, not their descendants
//	name:nginx                             every process named nginx
//	cgroup:/sys/fs/cgroup/system.slice/x.service
//	nginx                                  (no kind) a name
//
// pid: is a process with its descendants (an nginx master and its workers),
// as a sweep's watch is; tree: is read as pid:, as older results wrote it.
// A word of letters before the first ':' other than these kinds is an
// error; a process name that looks like one is written "name:a:b".
func ParseSelector(s string) (Selector, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return Selector{}, errors.New("cost selector: empty; want pid:N[,N…], only:N[,N…], name:NAME or cgroup:DIR")
	}
	kind, rest, ok := strings.Cut(s, ":")
	if !ok || !lettersOnly(kind) {
		return parseName(s, s)
	}
	rest = strings.TrimSpace(rest)
	switch kind {
	case "pid", "tree", "only":
		pids, err := parsePIDs(rest)
		if err != nil {
			return Selector{}, fmt.Errorf("cost selector %q: %w", s, err)
		}
		return Selector{PIDs: pids, Children: kind != "only"}, nil
	case "name":
		return parseName(s, rest)
	case "cgroup":
		dir := filepath.Clean(rest)
		if rest == "" || !filepath.IsAbs(rest) || strings.ContainsRune(rest, 0) || strings.TrimSpace(dir) != dir {
			return Selector{}, fmt.Errorf("cost selector %q: want cgroup:/absolute/directory, e.g. cgroup:/sys/fs/cgroup/system.slice/nginx.service", s)
		}
		return Selector{Cgroup: dir}, nil
	}
	return Selector{}, fmt.Errorf("cost selector %q: unknown kind %q; want pid, only, name or cgroup (a process name containing ':' is written name:NAME)", s, kind)
}

// lettersOnly tells whether the text before the first ':' reads as a
// selector kind; anything else (e.g. "kworker/0:1") is a plain name.
func lettersOnly(k string) bool {
	for _, r := range k {
		if (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') {
			return false
		}
	}
	return k != ""
}

func parseName(s, name string) (Selector, error) {
	switch {
	case name == "":
		return Selector{}, fmt.Errorf("cost selector %q: empty name", s)
	case len(name) > maxNameLen:
		return Selector{}, fmt.Errorf("cost selector %q: a process name is at most %d bytes", s, maxNameLen)
	case strings.ContainsAny(name, "\x00\n"):
		return Selector{}, fmt.Errorf("cost selector %q: a process name has no NUL or newline", s)
	case strings.TrimSpace(name) != name:
		return Selector{}, fmt.Errorf("cost selector %q: a process name does not start or end with a space", s)
	}
	return Selector{Name: name}, nil
}

// parsePIDs reads "123,456": positive, at most 2^22 (the kernel's PID_MAX_LIMIT),
// duplicates dropped, order kept.
func parsePIDs(s string) ([]int, error) {
	if s == "" {
		return nil, errors.New("want one or more process ids, e.g. pid:123,456")
	}
	var pids []int
	seen := map[int]bool{}
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 || n > 1<<22 {
			return nil, fmt.Errorf("%q is not a process id", f)
		}
		if !seen[n] {
			seen[n] = true
			pids = append(pids, n)
		}
	}
	return pids, nil
}

// String writes the selector the way ParseSelector reads it.
func (s Selector) String() string {
	switch {
	case s.Cgroup != "":
		return "cgroup:" + s.Cgroup
	case s.Name != "":
		return "name:" + s.Name
	case len(s.PIDs) > 0:
		var b strings.Builder
		if s.Children {
			b.WriteString("pid:")
		} else {
			b.WriteString("only:")
		}
		for i, p := range s.PIDs {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(p))
		}
		return b.String()
	}
	return "(no selection)"
}

// validate checks the shape of a Selector built by hand.
func (s Selector) validate() error {
	set := 0
	if len(s.PIDs) > 0 {
		set++
	}
	if s.Name != "" {
		set++
	}
	if s.Cgroup != "" {
		set++
	}
	switch {
	case set == 0:
		return errors.New("cost selector: nothing selected; set PIDs, Name or Cgroup")
	case set > 1:
		return errors.New("cost selector: set only one of PIDs, Name and Cgroup")
	case s.Children && len(s.PIDs) == 0:
		return errors.New("cost selector: Children applies to PIDs only")
	}
	for _, p := range s.PIDs {
		if p <= 0 {
			return fmt.Errorf("cost selector: %d is not a process id", p)
		}
	}
	return nil
}

// Resolve checks that the selection exists now, so that a typo is reported
// before any load is sent: every listed PID is running, at least one
// process has the name, the cgroup has CPU and memory counters and holds a
// process.
func (s Selector) Resolve() error {
	src, err := newSource(s)
	if err != nil {
		return err
	}
	_, err = src.read()
	return err
}
