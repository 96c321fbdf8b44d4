package sweep

import (
	"slices"
	"strings"

	"loadgen/internal/sidecarnames"
)

// HasProxy reports whether the placement puts a proxy in the path:
// none is the baseline, the same pods without one.
func (c Sidecar) HasProxy() bool { return c.Placement != sidecarnames.None }

// Where is where the path's load goes, as a plan lists it: its URL, or,
// for a sidecar path whose pods are not made yet (the sweep fills its URL
// as they run), its pods with sidecars: "pods with sidecars: PROXY
// PLACEMENT", and "mtls" when its sidecars speak mutual TLS.
func (p Path) Where() string {
	where := p.URL
	if sc := p.Sidecar; sc != nil && where == "" {
		where = strings.Join(strings.Fields("pods with sidecars: "+sc.Proxy+" "+sc.Placement), " ")
		if sc.MTLS {
			where += " mtls"
		}
	}
	return where
}

// SidecarsRunning points p, a sidecar path, at its running pods (url, the
// client pod's netns) and sets what its cost watches. started is whether
// its sidecars started: without them there is no proxy of its own to
// watch, and nothing else is. pids are its proxies' processes: when known,
// those only are watched, whatever p.Watch would match on the host, named
// as p.Watch or after the proxy, with workers, each proxy's as it runs
// them.
func (p *Path) SidecarsRunning(url, netns string, started bool, pids []int, workers int) {
	p.URL, p.NetNS = url, netns
	switch {
	case !started:
		p.Watch = nil
	case len(pids) > 0:
		name := p.Sidecar.Proxy
		if p.Watch != nil {
			name = p.Watch.Label()
		}
		p.Watch = &Watch{PIDs: pids, Name: name}
		p.Workers = workers
	}
}

// HasSidecars reports whether any path is a sidecar path (sidecar:
// PROXY, or sidecar:none): the sweep makes network namespaces and
// capture rules for them, which needs root.
func (s *Spec) HasSidecars() bool {
	for _, p := range s.Paths {
		if p.Sidecar != nil {
			return true
		}
	}
	return false
}

// SidecarProxy is one proxy the sidecar paths run: its paths, in plan
// order, and how many steps they hold in all.
type SidecarProxy struct {
	Proxy string
	Paths []string
	Steps int
}

// SidecarProxies are the proxies the sidecar paths run, in the order
// their first path comes, each with its paths and their steps: what a
// dry run names when a proxy is not installed. Paths of placement none
// run no proxy.
func (s *Spec) SidecarProxies() []SidecarProxy {
	perPath := len(s.Plan()) / max(1, len(s.Paths))
	var out []SidecarProxy
	for _, p := range s.Paths {
		if p.Sidecar == nil || !p.Sidecar.HasProxy() {
			continue
		}
		i := slices.IndexFunc(out, func(x SidecarProxy) bool { return x.Proxy == p.Sidecar.Proxy })
		if i < 0 {
			out = append(out, SidecarProxy{Proxy: p.Sidecar.Proxy})
			i = len(out) - 1
		}
		out[i].Paths = append(out[i].Paths, p.Name)
		out[i].Steps += perPath
	}
	return out
}
