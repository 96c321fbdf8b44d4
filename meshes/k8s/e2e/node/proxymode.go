package node

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// startKubeProxy starts kube-proxy in a mode and waits until it has
// synced its rules.
func (n *Node) startKubeProxy(ctx context.Context, m Member, mode string) error {
	n.say("kube-proxy (%s)%s", mode, n.on(m))
	p := n.mpaths(m)
	conf, err := kubeProxyConfig(p, n.Addr, m, mode, filepath.Join(n.Dir, "kube-proxy.kubeconfig"), n.CNI == CNIMacvlan)
	if err != nil {
		return err
	}
	if err := writeFile(p.kubeProxyConf, conf); err != nil {
		return err
	}
	if err := n.publishKubeProxyConfig(ctx, conf); err != nil {
		return err
	}
	bin, args := m.inNetns(n.Bins.path("kube-proxy"), "--config", p.kubeProxyConf, "--v=1")
	pr, err := n.launch(procName("kube-proxy", m), bin, args)
	if err != nil {
		return err
	}
	if err := pr.waitFor(ctx, 60*time.Second, httpCheck("http://"+net.JoinHostPort(m.IP, strconv.Itoa(PortKubeProxyHealthz))+"/healthz")); err != nil {
		return err
	}
	return pr.waitFor(ctx, 30*time.Second, func(ctx context.Context) error {
		got, err := n.proxyModeOf(ctx, m)
		if err != nil {
			return err
		}
		if got != mode {
			return fmt.Errorf("kube-proxy runs in %s mode, not %s", got, mode)
		}
		return nil
	})
}

// ProxyModeRunning is the mode kube-proxy says it runs in (/proxyMode):
// the first node's, the same on every node unless one says otherwise.
func (n *Node) ProxyModeRunning(ctx context.Context) (string, error) {
	var first string
	for i, m := range n.Members {
		got, err := n.proxyModeOf(ctx, m)
		if err != nil {
			return "", err
		}
		if i == 0 {
			first = got
		} else if got != first {
			return "", fmt.Errorf("kube-proxy runs in %s mode on %s, %s on %s", first, n.Members[0].Name, got, m.Name)
		}
	}
	return first, nil
}

func (n *Node) proxyModeOf(ctx context.Context, m Member) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+net.JoinHostPort(m.IP, strconv.Itoa(PortKubeProxyMetrics))+"/proxyMode", nil)
	if err != nil {
		return "", err
	}
	resp, err := insecureClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64))
	return strings.TrimSpace(string(b)), err
}

// SetProxyMode restarts kube-proxy in another mode, its old rules cleaned
// up first (kube-proxy --cleanup), as an operator switching modes does.
func (n *Node) SetProxyMode(ctx context.Context, mode string) error {
	if mode != ProxyIPTables && mode != ProxyNFTables {
		return fmt.Errorf("kube-proxy mode %q: want %s or %s", mode, ProxyIPTables, ProxyNFTables)
	}
	running := true
	for _, m := range n.Members {
		if p := n.proc(procName("kube-proxy", m)); p == nil || !p.alive() {
			running = false
		}
	}
	if running && n.ProxyMode == mode {
		return nil
	}
	for _, m := range n.Members {
		if p := n.proc(procName("kube-proxy", m)); p != nil {
			p.stop(10 * time.Second)
			if err := n.forget(p.Name); err != nil {
				return err
			}
		}
		if err := cleanupKubeProxy(ctx, n.Bins.Dir, m); err != nil {
			return err
		}
	}
	for _, m := range n.Members {
		if err := n.startKubeProxy(ctx, m, mode); err != nil {
			return err
		}
	}
	n.mu.Lock()
	n.st.ProxyMode = mode
	err := n.st.save()
	n.mu.Unlock()
	n.ProxyMode = mode
	return err
}

// publishKubeProxyConfig publishes kube-proxy's configuration as kubeadm
// does, in the ConfigMap kube-system/kube-proxy (key config.conf), where
// a cluster's tools read the mode kube-proxy runs in.
func (n *Node) publishKubeProxyConfig(ctx context.Context, conf []byte) error {
	cms := n.Client.CoreV1().ConfigMaps("kube-system")
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kube-proxy", Namespace: "kube-system"},
		Data: map[string]string{"config.conf": string(conf)}}
	// kube-system is the API server's to create, at its start: waited for.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err := cms.Update(ctx, cm, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
		}
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("ConfigMap kube-system/kube-proxy: %w", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(500 * time.Millisecond):
		}
	}
}
