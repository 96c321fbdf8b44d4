package k8s

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ClientCertSecret is the Secret a run makes of its paths' client
// certificates (a sweep path's cert and key, for a target behind mutual
// TLS), mounted read-only in the workers' pods at ClientCertDir.
const (
	ClientCertSecret = "loadgen-client-cert"
	ClientCertDir    = "/etc/loadgen/client-cert"
	volClientCert    = "loadgen-client-cert"
)

// ClientCert is one path's client certificate (chain) and key, PEM: the
// Secret holds them as NAME.crt and NAME.key.
type ClientCert struct {
	Name      string // a Secret key's stem: letters, digits, '-', '_', '.'
	Cert, Key []byte
}

// PathCertName names the client certificate of a sweep's path by its
// place in the file, i (from 0): path0, path1…, a Secret key's stem that
// no path's own name can break.
func PathCertName(i int) string { return "path" + strconv.Itoa(i) }

// ReadClientCert reads a path's cert and key files as the certificate
// named name (the sweep checked that they make a pair); a cert file that
// holds the key is both (keyFile "").
func ReadClientCert(name, certFile, keyFile string) (ClientCert, error) {
	if keyFile == "" {
		keyFile = certFile
	}
	c := ClientCert{Name: name}
	var err error
	if c.Cert, err = os.ReadFile(certFile); err != nil {
		return c, fmt.Errorf("cert: %w", err)
	}
	if c.Key, err = os.ReadFile(keyFile); err != nil {
		return c, fmt.Errorf("key: %w", err)
	}
	return c, nil
}

var secretKeyStem = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)

// ClientCertArgs are `loadgen run`'s flags for the client certificate
// name in the workers' mount.
func ClientCertArgs(name string) []string {
	return []string{"--cert", ClientCertDir + "/" + name + ".crt", "--key", ClientCertDir + "/" + name + ".key"}
}

// ClientCertObjects are the run's Secret of its client certificates;
// none without any.
func (o Options) ClientCertObjects(certs []ClientCert) ([]runtime.Object, error) {
	if len(certs) == 0 {
		return nil, nil
	}
	data := map[string][]byte{}
	for _, c := range certs {
		switch {
		case !secretKeyStem.MatchString(c.Name):
			return nil, fmt.Errorf("client certificate %q: want a name of letters, digits, '-', '_' or '.'", c.Name)
		case data[c.Name+".crt"] != nil:
			return nil, fmt.Errorf("client certificate %q given twice", c.Name)
		case len(c.Cert) == 0 || len(c.Key) == 0:
			return nil, fmt.Errorf("client certificate %q: the certificate and the key are both needed", c.Name)
		}
		data[c.Name+".crt"], data[c.Name+".key"] = slices.Clone(c.Cert), slices.Clone(c.Key)
	}
	return []runtime.Object{&corev1.Secret{ObjectMeta: o.Meta(ClientCertSecret, o.Namespace, nil), Type: corev1.SecretTypeOpaque, Data: data}}, nil
}

// mountClientCert mounts the run's client certificates read-only in the
// worker container (the pod's first), which alone mounts them; the files
// keep a Secret volume's default mode, readable by the worker's non-root
// user.
func mountClientCert(spec *corev1.PodSpec) {
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: volClientCert, VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: ClientCertSecret}}})
	c := &spec.Containers[0]
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: volClientCert, MountPath: ClientCertDir, ReadOnly: true})
}
