package sweep

import "loadgen/internal/sidecarnames"

// HasProxy reports whether the placement puts a proxy in the path:
// none is the baseline, the same pods without one.
func (c Sidecar) HasProxy() bool { return c.Placement != sidecarnames.None }

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
