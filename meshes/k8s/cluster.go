package k8s

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
)

// Cluster is a connection to one API server.
type Cluster struct {
	Config  *rest.Config
	Client  kubernetes.Interface
	Dynamic dynamic.Interface
	Mapper  meta.ResettableRESTMapper
	// Context and Host say which cluster this is, in messages.
	Context, Host string
}

// Connect loads the kubeconfig (KUBECONFIG, ~/.kube/config, or the
// in-cluster account; kubeconfig and context override) and checks that the
// API server answers. Its errors are one line naming the context and the
// address it tried.
func Connect(ctx context.Context, kubeconfig, kubeContext string) (*Cluster, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: kubeContext})
	name := kubeContext
	if raw, err := cc.RawConfig(); err == nil && name == "" {
		name = raw.CurrentContext
	}
	cfg, err := cc.ClientConfig()
	if err != nil {
		if name == "" {
			name = "(none)"
		}
		return nil, fmt.Errorf("no cluster to talk to (kubeconfig context %s): %v; set KUBECONFIG or --kubeconfig/--context", name, oneLine(err))
	}
	return ConnectConfig(ctx, cfg, name)
}

// ConnectConfig connects with a REST configuration (tests, in-cluster).
func ConnectConfig(ctx context.Context, cfg *rest.Config, contextName string) (*Cluster, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 100
	}
	cfg.UserAgent = "loadgen"
	c := &Cluster{Config: cfg, Context: contextName, Host: cfg.Host}
	var err error
	if c.Client, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, c.errorf("%v", err)
	}
	if c.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, c.errorf("%v", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, c.errorf("%v", err)
	}
	c.Mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if _, err := c.Client.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Raw(); err != nil {
		return nil, c.errorf("API server unreachable: %v", oneLine(err))
	}
	return c, nil
}

func (c *Cluster) errorf(format string, a ...any) error {
	return fmt.Errorf("context %s at %s: %s", c.Context, c.Host, fmt.Sprintf(format, a...))
}

// HTTPClient is an HTTP client with the cluster's credentials.
func (c *Cluster) HTTPClient() (*http.Client, error) { return rest.HTTPClientFor(c.Config) }

// oneLine keeps the first line of an error.
func oneLine(err error) string {
	s := err.Error()
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}

// WatchedPods lists the names of a watch's pods: those of its namespace
// that match its selector, and with NodesOf, only those on a node where a
// pod NodesOf selects runs (the ztunnels serving the run's pods, not every
// node's).
func (c *Cluster) WatchedPods(ctx context.Context, w Watch) ([]string, error) {
	l, err := c.Client.CoreV1().Pods(w.Namespace).List(ctx, metav1.ListOptions{LabelSelector: w.Selector})
	if err != nil {
		return nil, err
	}
	var nodes map[string]bool
	if w.NodesOf != nil {
		of, err := c.Client.CoreV1().Pods(w.NodesOf.Namespace).List(ctx, metav1.ListOptions{LabelSelector: w.NodesOf.Selector})
		if err != nil {
			return nil, err
		}
		nodes = map[string]bool{}
		for _, p := range of.Items {
			if p.Spec.NodeName != "" {
				nodes[p.Spec.NodeName] = true
			}
		}
	}
	out := make([]string, 0, len(l.Items))
	for _, p := range l.Items {
		if nodes != nil && !nodes[p.Spec.NodeName] {
			continue
		}
		out = append(out, p.Name)
	}
	return out, nil
}
