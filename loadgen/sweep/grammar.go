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
