// Package cluster is loadgen's connection to one API server and what it
// does there that is not a run's own: apply rendered objects by
// server-side apply, check that the cluster serves their kinds, delete
// what loadgen created by its labels (and only the namespaces it
// created), change the ingress controller's shared ConfigMap and put it
// back, and say why a pod is where it is.
package cluster

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
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
		return nil, fmt.Errorf("no cluster to talk to (kubeconfig context %s): %v; set KUBECONFIG or --kubeconfig/--context", name, OneLine(err))
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
		return nil, c.Errorf("%v", err)
	}
	if c.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, c.Errorf("%v", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, c.Errorf("%v", err)
	}
	c.Mapper = restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if _, err := c.Client.Discovery().RESTClient().Get().AbsPath("/version").Do(ctx).Raw(); err != nil {
		return nil, c.Errorf("API server unreachable: %v", OneLine(err))
	}
	return c, nil
}

// Errorf is an error that names the cluster: its context and address.
func (c *Cluster) Errorf(format string, a ...any) error {
	return fmt.Errorf("context %s at %s: %s", c.Context, c.Host, fmt.Sprintf(format, a...))
}

// HTTPClient is an HTTP client with the cluster's credentials.
func (c *Cluster) HTTPClient() (*http.Client, error) { return rest.HTTPClientFor(c.Config) }

// OneLine keeps the first line of an error: the API server's and
// client-go's run over several.
func OneLine(err error) string {
	s := err.Error()
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}
