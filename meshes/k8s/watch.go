package k8s

import (
	"context"
	"fmt"
	"time"

	"loadgen/results"
)

// Watch names the pods and container whose CPU and memory a step records:
// a mesh's proxies, its node agents, the ingress controller, the target.
type Watch struct {
	Name      string // in reports and assertions: istio-proxy, ztunnel, …
	Role      string // proxy or target
	Namespace string
	Selector  string // label selector of the pods
	Container string // empty: every container of the pods
}

// Selector is the watch in a result's selector field.
func (w Watch) String() string {
	s := fmt.Sprintf("k8s:%s/%s", w.Namespace, w.Selector)
	if w.Container != "" {
		s += "/" + w.Container
	}
	return s
}

// Watcher samples a watch over a measured window: Start at its beginning,
// the returned stop at its end.
type Watcher interface {
	Start(ctx context.Context, w Watch) (stop func() (results.ProcessCost, error), err error)
}

// Watches are the containers whose cost a mesh's steps record.
func (o Options) Watches() []Watch {
	own := Selector("")
	target := Watch{Name: "target", Role: "target", Namespace: o.Namespace, Selector: LabelName + "=" + TargetName}
	var ws []Watch
	switch o.Mesh {
	case MeshIstio:
		ws = append(ws, Watch{Name: "istio-proxy", Role: "proxy", Namespace: o.Namespace, Selector: own, Container: "istio-proxy"})
	case MeshIstioAmbient, MeshIstioWaypoint:
		ws = append(ws, Watch{Name: "ztunnel", Role: "proxy", Namespace: "istio-system", Selector: "app=ztunnel"})
		if o.Mesh == MeshIstioWaypoint {
			ws = append(ws, Watch{Name: "waypoint", Role: "proxy", Namespace: o.Namespace,
				Selector: "gateway.networking.k8s.io/gateway-name=" + WaypointName})
		}
	case MeshLinkerd:
		ws = append(ws, Watch{Name: "linkerd-proxy", Role: "proxy", Namespace: o.Namespace, Selector: own, Container: "linkerd-proxy"})
	case MeshAppMesh:
		ws = append(ws, Watch{Name: "envoy", Role: "proxy", Namespace: o.Namespace, Selector: own, Container: "envoy"})
	case MeshIngressNginx:
		ws = append(ws, Watch{Name: "ingress-nginx", Role: "proxy", Namespace: o.IngressNamespace,
			Selector: "app.kubernetes.io/name=ingress-nginx,app.kubernetes.io/component=controller", Container: "controller"})
	case MeshGateway:
		ws = append(ws, Watch{Name: "gateway", Role: "proxy", Namespace: o.Namespace,
			Selector: "gateway.networking.k8s.io/gateway-name=" + GatewayName})
	}
	return append(ws, target)
}

// usage is one sample of a watch: cores and bytes, summed over its pods.
type usage struct {
	at    time.Time
	cores float64
	bytes int64
	pods  int
}

// reduce turns samples into a ProcessCost over the window.
func reduce(w Watch, samples []usage, window time.Duration) results.ProcessCost {
	c := results.ProcessCost{Name: w.Name, Selector: w.String(), Role: w.Role, Samples: len(samples)}
	if len(samples) == 0 {
		return c
	}
	var cpu float64
	var mem int64
	for _, s := range samples {
		cpu += s.cores
		mem += s.bytes
		c.CPUMax = max(c.CPUMax, s.cores)
		c.MemMax = max(c.MemMax, s.bytes)
		c.Processes = max(c.Processes, s.pods)
	}
	c.CPUMean = cpu / float64(len(samples))
	c.MemMean = mem / int64(len(samples))
	c.CPUSeconds = c.CPUMean * window.Seconds()
	return c
}

// sampleLoop calls sample every period until stop closes, keeping what
// succeeded; the first error is returned if nothing ever did.
func sampleLoop(ctx context.Context, period time.Duration, sample func(context.Context) (usage, bool, error), stop <-chan struct{}) ([]usage, error) {
	var out []usage
	var first error
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		u, ok, err := sample(ctx)
		switch {
		case err != nil && first == nil:
			first = err
		case ok:
			out = append(out, u)
		}
		select {
		case <-stop:
			if len(out) == 0 && first != nil {
				return nil, first
			}
			return out, nil
		case <-ctx.Done():
			return out, ctx.Err()
		case <-t.C:
		}
	}
}
