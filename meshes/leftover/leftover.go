// Package leftover marks what a loadgen run makes outside its own process
// with the run's pid — network namespaces (and the veths, iptables rules
// and BPF programs inside them, which go with them) and temporary
// directories (a proxy's configuration and logs, certificates) — and
// finds and removes those of runs that died without cleaning up (kill -9,
// a crash, a power cut).
//
// The marks are in the names:
//
//	lg<PID><rest>                       a namespace (rest begins with a non-digit)
//	lgt<PID><rest>                      a namespace a test made
//	$TMPDIR/loadgen-<what>-<PID>-<N>    a temporary directory
//
// A leftover is stale when its process is gone, or when the pid now
// belongs to another program: a process that started after the leftover
// was made (the pid was reused), or one that is not loadgen (its name and
// executable say neither loadgen nor a Go test binary, NAME.test, and it
// is not this process's executable).
package leftover

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Kind is what a leftover is.
type Kind string

// The kinds of leftovers.
const (
	Namespace Kind = "network namespace"
	Dir       Kind = "temporary directory"
)

// Item is one leftover of a dead run.
type Item struct {
	Kind Kind
	Name string // the namespace's name, the directory's path
	PID  int    // the process that made it
	Test bool   // a test made it (lgt<PID>…)
	Why  string // why its process is taken for gone: "pid 123 is gone"
}

func (it Item) String() string { return string(it.Kind) + " " + it.Name }

// Name is the name of a namespace this process makes: lg<PID> and rest,
// which must begin with a non-digit ("-vxlan-", "p0").
func Name(rest string) string { return "lg" + strconv.Itoa(os.Getpid()) + rest }

// TempDir makes a new temporary directory for what (letters only: nginx,
// haproxy, mtls) marked with this process's pid:
// $TMPDIR/loadgen-WHAT-PID-N. The caller removes it.
func TempDir(what string) (string, error) {
	if !whatRE.MatchString(what) {
		return "", fmt.Errorf("leftover: temporary directory kind %q: want lowercase letters", what)
	}
	return os.MkdirTemp("", "loadgen-"+what+"-"+strconv.Itoa(os.Getpid())+"-")
}

var whatRE = regexp.MustCompile(`^[a-z]+$`)

// The names of leftovers, each with the pid that made it. Besides this
// package's forms, those of older builds: lgprobe<PID>-N probes of a lab,
// which lg<PID> now begins too.
var (
	nsREs = []*regexp.Regexp{
		regexp.MustCompile(`^lg([0-9]+)[^0-9]`),
		regexp.MustCompile(`^lgprobe([0-9]+)-`),
	}
	testNSRE = regexp.MustCompile(`^lgt([0-9]+)[^0-9]`)
	dirRE    = regexp.MustCompile(`^loadgen-[a-z]+-([0-9]+)-[0-9]+$`)
)

// ParseNamespace tells which process made the namespace called name and
// whether a test did; ok is false for a namespace that is not loadgen's.
func ParseNamespace(name string) (pid int, test, ok bool) {
	if pid, ok := match(testNSRE, name); ok {
		return pid, true, true
	}
	for _, re := range nsREs {
		if pid, ok := match(re, name); ok {
			return pid, false, true
		}
	}
	return 0, false, false
}

// ParseDir tells which process made the temporary directory called base
// (a name, not a path); ok is false for one that is not loadgen's.
func ParseDir(base string) (pid int, ok bool) { return match(dirRE, base) }

func match(re *regexp.Regexp, s string) (int, bool) {
	m := re.FindStringSubmatch(s)
	if m == nil {
		return 0, false
	}
	pid, err := strconv.Atoi(m[1])
	return pid, err == nil && pid > 0
}

// NetnsDir is where `ip netns` keeps its namespaces.
const NetnsDir = "/run/netns"

// Find lists the leftovers of dead loadgen runs: the namespaces in
// NetnsDir and the temporary directories in os.TempDir() whose process is
// gone (see the package's doc). Those of running loadgen processes,
// this one's too, are not listed.
func Find() ([]Item, error) {
	var items []Item
	var errs []error
	entries, err := os.ReadDir(NetnsDir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	for _, e := range entries {
		pid, test, ok := ParseNamespace(e.Name())
		if !ok {
			continue
		}
		if why, stale := staleOwner(pid, madeAt(filepath.Join(NetnsDir, e.Name()))); stale {
			items = append(items, Item{Kind: Namespace, Name: e.Name(), PID: pid, Test: test, Why: why})
		}
	}
	tmp := os.TempDir()
	entries, err = os.ReadDir(tmp)
	if err != nil {
		errs = append(errs, err)
	}
	for _, e := range entries {
		pid, ok := ParseDir(e.Name())
		if !ok || !e.IsDir() {
			continue
		}
		path := filepath.Join(tmp, e.Name())
		if why, stale := staleOwner(pid, madeAt(path)); stale {
			items = append(items, Item{Kind: Dir, Name: path, PID: pid, Why: why})
		}
	}
	return items, errors.Join(errs...)
}

// madeAt is when the leftover at path was made, or last changed by its
// maker (a directory's mtime); zero when unknown.
func madeAt(path string) time.Time {
	fi, err := os.Stat(path)
	if err != nil {
		return time.Time{}
	}
	return fi.ModTime()
}

// Remove deletes it: a namespace with `ip netns del` (its devices, rules
// and programs go with it), a directory with what it holds.
func (it Item) Remove(ctx context.Context) error {
	switch it.Kind {
	case Namespace:
		out, err := exec.CommandContext(ctx, "ip", "netns", "del", it.Name).CombinedOutput()
		if err != nil {
			if _, serr := os.Stat(filepath.Join(NetnsDir, it.Name)); errors.Is(serr, os.ErrNotExist) {
				return nil // gone meanwhile (another cleanup): what was wanted
			}
			return fmt.Errorf("ip netns del %s: %v: %s", it.Name, err, strings.TrimSpace(string(out)))
		}
		return nil
	case Dir:
		return os.RemoveAll(it.Name)
	}
	return fmt.Errorf("leftover: unknown kind %q", it.Kind)
}

// CanRemove tells whether this process may remove it: a namespace needs
// root.
func (it Item) CanRemove() bool { return it.Kind != Namespace || geteuid() == 0 }

// geteuid is os.Geteuid; a test's to change.
var geteuid = os.Geteuid

// ErrNeedsRoot is why a namespace is left: this process is not root.
var ErrNeedsRoot = errors.New("deleting a namespace needs root")

// Fate is what became of a leftover in RemoveItems.
type Fate int

const (
	Removed     Fate = iota // removed
	WouldRemove             // a dry run's: it would be removed
	NeedsRoot               // left: a namespace, and this process is not root (ErrNeedsRoot)
	Failed                  // Remove failed (Outcome.Err)
)

// Outcome is what became of one leftover.
type Outcome struct {
	Item
	Fate Fate
	Err  error // why it is left: ErrNeedsRoot, or Remove's error
}

// How long a removal of leftovers may take before its context ends.
const (
	// CleanupTimeout bounds loadgen cleanup (lab --cleanup): every
	// leftover, each removal waited on.
	CleanupTimeout = 2 * time.Minute
	// StartTimeout bounds the Clean a sweep, lab or size runs as it
	// starts, which holds up its load.
	StartTimeout = time.Minute
)

// RemoveItems removes items in order, or with dryRun none, and tells
// each's outcome to each (if not nil) as it comes: a caller prints a
// line per leftover while the rest are removed. It returns them all.
func RemoveItems(ctx context.Context, items []Item, dryRun bool, each func(Outcome)) []Outcome {
	outs := make([]Outcome, 0, len(items))
	for _, it := range items {
		o := Outcome{Item: it}
		switch {
		case dryRun:
			o.Fate = WouldRemove
		case !it.CanRemove():
			o.Fate, o.Err = NeedsRoot, ErrNeedsRoot
		default:
			if o.Err = it.Remove(ctx); o.Err != nil {
				o.Fate = Failed
			}
		}
		if each != nil {
			each(o)
		}
		outs = append(outs, o)
	}
	return outs
}

// Clean removes every leftover of dead runs that this process may remove
// (namespaces only as root) and returns those it removed; keep, if not
// nil, chooses among them (CleanupStaleTests: a test's only).
func Clean(ctx context.Context, keep func(Item) bool) ([]Item, error) {
	items, err := Find()
	var errs []error
	if err != nil {
		errs = append(errs, err)
	}
	var chosen []Item
	for _, it := range items {
		if it.CanRemove() && (keep == nil || keep(it)) {
			chosen = append(chosen, it)
		}
	}
	var removed []Item
	for _, o := range RemoveItems(ctx, chosen, false, nil) {
		if o.Fate == Failed {
			errs = append(errs, o.Err)
			continue
		}
		removed = append(removed, o.Item)
	}
	return removed, errors.Join(errs...)
}

// Summary says in one line what Clean removed: "2 network namespaces and
// 1 temporary directory of killed loadgen runs (pids 123, 456)".
func Summary(items []Item) string {
	var ns, dirs int
	var pids []int
	for _, it := range items {
		if it.Kind == Namespace {
			ns++
		} else {
			dirs++
		}
		if !slices.Contains(pids, it.PID) {
			pids = append(pids, it.PID)
		}
	}
	slices.Sort(pids)
	var parts []string
	if ns > 0 {
		parts = append(parts, plural(ns, string(Namespace)))
	}
	if dirs > 0 {
		parts = append(parts, plural(dirs, string(Dir)))
	}
	ids := make([]string, len(pids))
	for i, p := range pids {
		ids[i] = strconv.Itoa(p)
	}
	which := "pid"
	if len(ids) > 1 {
		which = "pids"
	}
	return fmt.Sprintf("%s of killed loadgen runs (%s %s)", strings.Join(parts, " and "), which, strings.Join(ids, ", "))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + strings.Replace(what+"s", "directorys", "directories", 1)
}
