package sweep

import (
	"fmt"
	"strconv"
	"strings"

	"loadgen/results/cost"
)

// ParseWatch reads a watch as --watch and --target-watch give it, in
// results/cost's selector grammar: name:nginx (or a bare process name),
// pid:12 (the process and its descendants; pid:1,2 several), or
// cgroup:/sys/fs/cgroup/…. only:N, processes without their descendants,
// is not a watch.
func ParseWatch(sel string) (*Watch, error) {
	s, err := cost.ParseSelector(sel)
	if err != nil {
		return nil, err
	}
	switch {
	case s.Name != "":
		return &Watch{Process: s.Name}, nil
	case s.Cgroup != "":
		return &Watch{Cgroup: s.Cgroup}, nil
	case !s.Children:
		return nil, fmt.Errorf("%q: a watch is processes with their descendants: pid:N", sel)
	case len(s.PIDs) == 1:
		return &Watch{PID: s.PIDs[0]}, nil
	}
	return &Watch{PIDs: s.PIDs}, nil
}

// Selector is the watch in results/cost's selector grammar, the one
// ParseWatch reads: "name:nginx", "pid:12" (with its descendants).
func (w Watch) Selector() string {
	var s cost.Selector
	switch {
	case w.Process != "":
		s.Name = w.Process
	case w.PID != 0:
		s.PIDs, s.Children = []int{w.PID}, true
	case len(w.PIDs) > 0:
		s.PIDs, s.Children = w.PIDs, true
	default:
		return "cgroup:" + w.Cgroup
	}
	return s.String()
}

// ParseSidecarURL reads a --path's "sidecar:PROXY,mode=PLACEMENT[,mtls][,workers=N]"
// (mode none needs no proxy: sidecar:none); ok is false when s is not a
// sidecar: URL (an address).
func ParseSidecarURL(s string) (sc *Sidecar, ok bool, err error) {
	rest, ok := strings.CutPrefix(s, "sidecar:")
	if !ok {
		return nil, false, nil
	}
	parts := strings.Split(rest, ",")
	sc = &Sidecar{Proxy: parts[0], Placement: "both"}
	if parts[0] == "none" {
		sc.Proxy, sc.Placement = "", "none"
	}
	for _, kv := range parts[1:] {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "mode", "placement":
			sc.Placement = v
		case "mtls":
			sc.MTLS = true
		case "workers":
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, true, fmt.Errorf("sidecar %q: workers=%q is not a number", s, v)
			}
			sc.Workers = n
		default:
			return nil, true, fmt.Errorf("sidecar %q: unknown %q; want sidecar:PROXY,mode=PLACEMENT[,mtls][,workers=N]", s, kv)
		}
	}
	return sc, true, nil
}

// ParsePayloads reads a comma-separated list of payload sizes, as
// --payloads gives it: "100,1KiB,1MiB" (each as ParseSize reads it).
func ParsePayloads(s string) (Payloads, error) { return parseList(s, ParseSize) }

// ParseRates reads a comma-separated list of open-loop rates, as -R
// gives it: "0,1k,2.5k" (each as ParseRate reads it; 0 is closed loop).
func ParseRates(s string) (Rates, error) { return parseList(s, ParseRate) }

// parseList reads a comma-separated list, each item by parse.
func parseList[T any](s string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, item := range strings.Split(s, ",") {
		v, err := parse(item)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// ParsePathFlag reads a --path: NAME=URL, or NAME=sidecar:… (ParseSidecarURL),
// whose path has no URL (the sweep fills in the pods' address). An error
// reads after the flag's name: --path <err>.
func ParsePathFlag(s string) (Path, error) {
	name, url, ok := strings.Cut(s, "=")
	if !ok {
		return Path{}, fmt.Errorf("%q: want NAME=URL", s)
	}
	sc, isSidecar, err := ParseSidecarURL(url)
	if err != nil {
		return Path{}, fmt.Errorf("%s: %w", name, err)
	}
	if isSidecar {
		url = ""
	}
	return Path{Name: name, URL: url, Sidecar: sc}, nil
}

// ParseWatchFlag reads a --watch: NAME=SELECTOR, the path's name and its
// watch in ParseWatch's grammar (NAME=name:nginx, NAME=pid:123,
// NAME=cgroup:/sys/fs/cgroup/…). An error reads after the flag's name:
// --watch <err>.
func ParseWatchFlag(s string) (name string, w *Watch, err error) {
	name, sel, ok := strings.Cut(s, "=")
	if !ok {
		return "", nil, fmt.Errorf("%q: want NAME=name:PROCESS, NAME=pid:N or NAME=cgroup:DIR", s)
	}
	if w, err = ParseWatch(sel); err != nil {
		return "", nil, fmt.Errorf("%s: %w", name, err)
	}
	return name, w, nil
}

// PathIndex is the index of the path called name, or -1.
func (s *Spec) PathIndex(name string) int {
	for i, p := range s.Paths {
		if p.Name == name {
			return i
		}
	}
	return -1
}

// SetPath gives the path of p's name p's address and sidecar (a flag's
// address for a file's path), or adds p when s has no path of that name.
func (s *Spec) SetPath(p Path) {
	if i := s.PathIndex(p.Name); i >= 0 {
		s.Paths[i].URL, s.Paths[i].Sidecar = p.URL, p.Sidecar
		return
	}
	s.Paths = append(s.Paths, p)
}

// SetWatch watches w on the path called name.
func (s *Spec) SetWatch(name string, w *Watch) error {
	i := s.PathIndex(name)
	if i < 0 {
		return fmt.Errorf("%s: no path named %s", name, name)
	}
	s.Paths[i].Watch = w
	return nil
}
