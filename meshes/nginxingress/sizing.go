package nginxingress

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"loadgen/meshes/leftover"
	"loadgen/targets/tlscert"
)

// SizingName names the sizing's path through the nginx with workers
// worker processes: nginx-wN, and nginx-wN-tls for its TLS listener.
func SizingName(workers int, tls bool) string {
	name := fmt.Sprintf("nginx-w%d", workers)
	if tls {
		name += sizingTLS
	}
	return name
}

const sizingTLS = "-tls"

// SizingIsTLS tells whether a sizing path's name (SizingName) is a TLS
// listener's.
func SizingIsTLS(name string) bool { return strings.HasSuffix(name, sizingTLS) }

// DefaultSizingKeyType is a sizing's TLS key when not told (loadgen size
// --key-type): RSA-2048, what NGINX's "SSL TPS" figures use.
const DefaultSizingKeyType = tlscert.RSA2048

// SizingConfig is an ingress sizing's fixture: for each worker count, a
// plaintext and a TLS nginx in front of one upstream.
type SizingConfig struct {
	Upstream string // host:port of the target
	Workers  []int  // worker_processes counts
	KeyType  tlscert.KeyType
	// MTLS makes the TLS nginx require a client certificate, which a CA
	// made for the run issues (Sizing.ClientCert).
	MTLS bool
}

// SizingProxy is one nginx of a sizing, running.
type SizingProxy struct {
	Name    string // SizingName
	Workers int
	TLS     bool
	URL     string
	PID     int // nginx's master
}

// Sizing is a sizing's nginx instances, running, and the files its TLS
// paths use.
type Sizing struct {
	Proxies []SizingProxy
	// CACert is the PEM file the TLS listeners' certificate is checked by
	// (self-signed: the certificate itself).
	CACert string
	// ClientCert and ClientKey are the client certificate's PEM files
	// under MTLS; "" otherwise.
	ClientCert, ClientKey string

	dir     string
	running []*Proxy
}

// StartSizing writes the certificates into a directory of its own and
// starts, for each worker count, a plaintext and a TLS nginx in front of
// cfg.Upstream, in that order. Close stops them and removes the files.
func StartSizing(ctx context.Context, cfg SizingConfig) (_ *Sizing, err error) {
	dir, err := leftover.TempDir("size")
	if err != nil {
		return nil, err
	}
	s := &Sizing{dir: dir}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	cert, err := tlscert.New(cfg.KeyType)
	if err != nil {
		return nil, err
	}
	files := &TLSFiles{Cert: filepath.Join(dir, "tls.crt"), Key: filepath.Join(dir, "tls.key")}
	if err := writeFiles(map[string][]byte{files.Cert: cert.CertPEM, files.Key: cert.KeyPEM}); err != nil {
		return nil, err
	}
	s.CACert = files.Cert
	if cfg.MTLS {
		if files.ClientCA, s.ClientCert, s.ClientKey, err = writeClientCert(dir, cfg.KeyType); err != nil {
			return nil, err
		}
	}
	for _, sp := range SizingPlan(cfg.Workers) {
		c := Config{Listen: "127.0.0.1:0", Upstream: cfg.Upstream, Workers: sp.Workers}
		if sp.TLS {
			c.TLS = files
		}
		px, err := Start(ctx, c)
		if err != nil {
			return nil, fmt.Errorf("start nginx with %d workers: %w", sp.Workers, err)
		}
		s.running = append(s.running, px)
		sp.URL, sp.PID = px.URL(), px.MasterPID()
		s.Proxies = append(s.Proxies, sp)
	}
	return s, nil
}

// SizingPlan is the nginx instances StartSizing starts for the worker
// counts, in its order (per count, plaintext then TLS), not yet running:
// their URL and PID are empty. A dry run prints it; a resume checks it.
func SizingPlan(workers []int) []SizingProxy {
	var out []SizingProxy
	for _, n := range workers {
		for _, tls := range []bool{false, true} {
			out = append(out, SizingProxy{Name: SizingName(n, tls), Workers: n, TLS: tls})
		}
	}
	return out
}

// PlannedSizing is SizingPlan with each URL saying where its nginx will
// be (Planned): what a dry run prints and a resume checks before nginx
// starts.
func PlannedSizing(workers []int, mtls bool) []SizingProxy {
	plan := SizingPlan(workers)
	for i := range plan {
		plan[i].URL = plan[i].Planned(mtls)
	}
	return plan
}

// writeClientCert makes a CA and a client certificate of key type kt in
// dir, and returns their PEM files.
func writeClientCert(dir string, kt tlscert.KeyType) (caFile, certFile, keyFile string, err error) {
	ca, err := tlscert.NewCA(kt, "loadgen size clients")
	if err != nil {
		return "", "", "", err
	}
	c, err := ca.Issue(kt, nil, "loadgen-client")
	if err != nil {
		return "", "", "", err
	}
	caFile, certFile, keyFile = filepath.Join(dir, "client-ca.pem"), filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
	return caFile, certFile, keyFile, writeFiles(map[string][]byte{caFile: ca.CertPEM, certFile: c.CertPEM, keyFile: c.KeyPEM})
}

func writeFiles(files map[string][]byte) error {
	for path, b := range files {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// Close stops the nginx instances, the last started first, and removes
// the certificates.
func (s *Sizing) Close() error {
	var errs []error
	for i := len(s.running) - 1; i >= 0; i-- {
		if err := s.running[i].Close(); err != nil {
			errs = append(errs, err)
		}
	}
	s.running = nil
	if err := os.RemoveAll(s.dir); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
