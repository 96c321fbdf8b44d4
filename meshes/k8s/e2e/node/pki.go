package node

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// ca is a certificate authority of the node's own, made new at each start.
type ca struct {
	cert *x509.Certificate
	key  crypto.Signer
	pem  []byte
}

func newCA(name string) (*ca, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(30 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &ca{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// leaf is a certificate the CA signed, in PEM.
type leaf struct {
	cert, key []byte
}

// issue signs a certificate for a client (user and groups as the API
// server reads them: CN and O) or a server (hosts as SANs).
func (c *ca) issue(cn string, orgs []string, hosts []string, server bool) (leaf, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return leaf{}, err
	}
	tpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: cn, Organization: orgs},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(30 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tpl.ExtKeyUsage = append(tpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
		for _, h := range hosts {
			if ip := net.ParseIP(h); ip != nil {
				tpl.IPAddresses = append(tpl.IPAddresses, ip)
			} else {
				tpl.DNSNames = append(tpl.DNSNames, h)
			}
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tpl, c.cert, key.Public(), c.key)
	if err != nil {
		return leaf{}, err
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return leaf{}, err
	}
	return leaf{
		cert: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		key:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}),
	}, nil
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

// pki is every credential of the node, written under dir/pki.
type pki struct {
	dir string
	// The files, by role.
	CA, CAKey                 string
	FrontProxyCA              string
	APIServer, APIServerKey   string
	FrontProxy, FrontProxyKey string
	SAKey, SAPub              string
}

// user is a client identity with its kubeconfig.
type user struct {
	name, cn string
	orgs     []string
}

// The identities the components run as, as kubeadm gives them: each
// node's kubelet its own (system:node:NAME, which the Node authorizer
// and NodeRestriction hold to its node), flanneld one bound to Flannel's
// ClusterRole, Cilium's agents and operator one of system:masters.
func users(nodes []string, cni string) []user {
	us := []user{
		{"admin", "kubernetes-admin", []string{"system:masters"}},
		{"controller-manager", "system:kube-controller-manager", nil},
		{"scheduler", "system:kube-scheduler", nil},
		{"kube-proxy", "system:kube-proxy", nil},
		// The API server's identity towards kubelets (logs, exec), and the
		// one that CoreDNS, metrics-server and Prometheus use: cluster-admin,
		// as their own ClusterRoles would be more than this node needs.
		{"apiserver-kubelet-client", "kube-apiserver-kubelet-client", []string{"system:masters"}},
	}
	for _, name := range nodes {
		us = append(us, user{kubeletUserOf(name), "system:node:" + name, []string{"system:nodes"}})
	}
	if len(nodes) > 1 {
		us = append(us, user{"flannel", FlannelUser, nil})
	}
	if cni == CNICilium {
		us = append(us, user{"cilium", CiliumUser, []string{"system:masters"}})
	}
	return us
}

// kubeletUser is a member's kubelet's user (and kubeconfig) name.
func kubeletUser(m Member) string { return kubeletUserOf(m.Name) }

func kubeletUserOf(name string) string {
	if name == NodeName {
		return "kubelet"
	}
	return "kubelet-" + name
}

// makePKI writes a new CA, the API server's serving certificate, the
// front proxy's (aggregated APIs: metrics-server), the service account
// key pair and each user's client certificate.
func makePKI(dir string, a Addresses, nodes []string, cni string) (*pki, error) {
	p := &pki{dir: filepath.Join(dir, "pki")}
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return nil, err
	}
	root, err := newCA("loadgen-node-ca")
	if err != nil {
		return nil, err
	}
	front, err := newCA("loadgen-node-front-proxy-ca")
	if err != nil {
		return nil, err
	}
	write := func(name string, b []byte) (string, error) {
		path := filepath.Join(p.dir, name)
		return path, os.WriteFile(path, b, 0o600)
	}
	if p.CA, err = write("ca.crt", root.pem); err != nil {
		return nil, err
	}
	// Its key, for serving certificates issued later (the injection
	// webhook's, to a node attached to as well).
	kb, err := x509.MarshalPKCS8PrivateKey(root.key)
	if err != nil {
		return nil, err
	}
	if p.CAKey, err = write("ca.key", pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb})); err != nil {
		return nil, err
	}
	if p.FrontProxyCA, err = write("front-proxy-ca.crt", front.pem); err != nil {
		return nil, err
	}
	hosts := []string{a.NodeIP, a.APIServiceIP, "127.0.0.1", "localhost", "kubernetes", "kubernetes.default",
		"kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
	hosts = append(hosts, nodes...)
	srv, err := root.issue("kube-apiserver", nil, hosts, true)
	if err != nil {
		return nil, err
	}
	if p.APIServer, err = write("apiserver.crt", srv.cert); err != nil {
		return nil, err
	}
	if p.APIServerKey, err = write("apiserver.key", srv.key); err != nil {
		return nil, err
	}
	fp, err := front.issue("front-proxy-client", nil, nil, false)
	if err != nil {
		return nil, err
	}
	if p.FrontProxy, err = write("front-proxy-client.crt", fp.cert); err != nil {
		return nil, err
	}
	if p.FrontProxyKey, err = write("front-proxy-client.key", fp.key); err != nil {
		return nil, err
	}
	// Service account tokens: RSA, as kubeadm makes them.
	sa, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	pub, err := x509.MarshalPKIXPublicKey(sa.Public())
	if err != nil {
		return nil, err
	}
	if p.SAKey, err = write("sa.key", pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(sa)})); err != nil {
		return nil, err
	}
	if p.SAPub, err = write("sa.pub", pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})); err != nil {
		return nil, err
	}
	for _, u := range users(nodes, cni) {
		l, err := root.issue(u.cn, u.orgs, nil, false)
		if err != nil {
			return nil, err
		}
		if _, err := write(u.name+".crt", l.cert); err != nil {
			return nil, err
		}
		if _, err := write(u.name+".key", l.key); err != nil {
			return nil, err
		}
		if err := writeKubeconfig(filepath.Join(dir, u.name+".kubeconfig"), "https://"+net.JoinHostPort(a.NodeIP, fmt.Sprint(PortAPIServer)),
			p.CA, p.cert(u.name), p.key(u.name)); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *pki) cert(user string) string { return filepath.Join(p.dir, user+".crt") }
func (p *pki) key(user string) string  { return filepath.Join(p.dir, user+".key") }

// writeKubeconfig writes a kubeconfig of one cluster, user and context,
// with the files it names embedded, so it can be copied anywhere.
func writeKubeconfig(path, server, caFile, certFile, keyFile string) error {
	var data [3][]byte
	for i, f := range []string{caFile, certFile, keyFile} {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		data[i] = b
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[ContextName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: data[0]}
	cfg.AuthInfos[ContextName] = &clientcmdapi.AuthInfo{ClientCertificateData: data[1], ClientKeyData: data[2]}
	cfg.Contexts[ContextName] = &clientcmdapi.Context{Cluster: ContextName, AuthInfo: ContextName}
	cfg.CurrentContext = ContextName
	return clientcmd.WriteToFile(*cfg, path)
}

// loadCA reads the node's CA back from its files (ca.crt, ca.key).
func loadCA(pkiDir string) (*ca, error) {
	certPEM, err := os.ReadFile(filepath.Join(pkiDir, "ca.crt"))
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(pkiDir, "ca.key"))
	if err != nil {
		return nil, fmt.Errorf("the node's CA key (started by an older build? take it down and up again): %w", err)
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, fmt.Errorf("%s: not PEM", pkiDir)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParsePKCS8PrivateKey(kb.Bytes)
	if err != nil {
		return nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s: the CA key cannot sign", pkiDir)
	}
	return &ca{cert: cert, key: signer, pem: certPEM}, nil
}
