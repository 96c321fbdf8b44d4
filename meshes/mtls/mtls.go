// Package mtls is a mesh's certificate authority for one run: a root made
// fresh by New, and per-workload certificates whose only name is the
// workload's SPIFFE ID (spiffe://cluster.local/ns/NS/sa/SA), as Istio's CA
// issues them, written as PEM files a proxy config can name.
package mtls

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"

	"loadgen/meshes/layout"
	"loadgen/targets/tlscert"
)

// TrustDomain is Istio's default trust domain.
const TrustDomain = "cluster.local"

// Workload is a Kubernetes namespace and service account: what a SPIFFE ID
// names.
type Workload struct {
	Namespace      string
	ServiceAccount string
}

// DefaultPair is the two workloads of a local sidecar comparison and of
// the proxies' tests: the client loadgen and the server httpbin, both in
// the namespace default.
func DefaultPair() (client, server Workload) {
	return Workload{Namespace: "default", ServiceAccount: "loadgen"}, Workload{Namespace: "default", ServiceAccount: "httpbin"}
}

// dnsLabel is what Kubernetes allows for namespace and service account
// names (RFC 1123 labels).
var dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)

// Validate checks both names are RFC 1123 labels.
func (w Workload) Validate() error {
	for _, n := range []struct{ what, v string }{{"namespace", w.Namespace}, {"service account", w.ServiceAccount}} {
		if !dnsLabel.MatchString(n.v) {
			return fmt.Errorf("mtls: %s %q: want a lower-case RFC 1123 label (a-z, 0-9, '-')", n.what, n.v)
		}
	}
	return nil
}

// DNSName is the name of the workload's Service in cluster DNS, taken to
// be the service account's: SA.NS.svc.cluster.local.
func (w Workload) DNSName() string {
	return w.ServiceAccount + "." + w.Namespace + ".svc." + TrustDomain
}

// ID is the workload's SPIFFE ID.
func (w Workload) ID() *url.URL {
	return &url.URL{Scheme: "spiffe", Host: TrustDomain, Path: "/ns/" + w.Namespace + "/sa/" + w.ServiceAccount}
}

// CA is a run's root certificate and where its files go.
type CA struct {
	root *tlscert.Cert
	dir  string
}

// New makes a root (RSA-2048, O=cluster.local) and writes it to
// dir/root-cert.pem. dir must exist.
func New(dir string) (*CA, error) {
	root, err := tlscert.NewCA(tlscert.RSA2048, TrustDomain)
	if err != nil {
		return nil, fmt.Errorf("mtls: %w", err)
	}
	ca := &CA{root: root, dir: dir}
	if err := os.WriteFile(ca.RootFile(), root.CertPEM, 0o644); err != nil {
		return nil, fmt.Errorf("mtls: %w", err)
	}
	return ca, nil
}

// RootFile is the path of the root certificate's PEM file.
func (ca *CA) RootFile() string { return filepath.Join(ca.dir, rootFile) }

const rootFile = "root-cert.pem"

// Files are the files a CA writes in dir that a sidecar of workload w,
// talking to peer, names: the root (root-cert.pem), w's certificate and key
// (NS.SA.crt and NS.SA.key), and the peer's identity. A config rendered for
// another machine names them so (loadgen mesh render --mtls-dir).
func Files(dir string, w, peer Workload) *layout.MTLS {
	base := filepath.Join(dir, w.Namespace+"."+w.ServiceAccount)
	return &layout.MTLS{CA: filepath.Join(dir, rootFile), Cert: base + ".crt", Key: base + ".key", PeerID: peer.ID().String(), PeerName: peer.DNSName()}
}

// Root is the root certificate, for in-process clients.
func (ca *CA) Root() *tlscert.Cert { return ca.root }

// Issue makes w's certificate (RSA-2048, like Istio's default) and key,
// named by its SPIFFE ID and, for proxies that verify a DNS name only, by
// its DNSName,
// writes them as dir/NS.SA.crt and dir/NS.SA.key (the key readable by its
// owner only, chown it to the proxy's user), and returns the files for a
// sidecar of w that talks to peer.
func (ca *CA) Issue(w, peer Workload) (*layout.MTLS, *tlscert.Cert, error) {
	if err := w.Validate(); err != nil {
		return nil, nil, err
	}
	if err := peer.Validate(); err != nil {
		return nil, nil, err
	}
	cert, err := ca.root.Issue(tlscert.RSA2048, []*url.URL{w.ID()}, w.DNSName())
	if err != nil {
		return nil, nil, fmt.Errorf("mtls: %w", err)
	}
	files := Files(ca.dir, w, peer)
	if err := os.WriteFile(files.Cert, cert.CertPEM, 0o644); err != nil {
		return nil, nil, fmt.Errorf("mtls: %w", err)
	}
	if err := os.WriteFile(files.Key, cert.KeyPEM, 0o600); err != nil {
		return nil, nil, fmt.Errorf("mtls: %w", err)
	}
	return files, cert, nil
}
