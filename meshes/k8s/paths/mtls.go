package paths

import (
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"loadgen/meshes/k8s"
	"loadgen/targets/tlscert"
)

// The mutual TLS test's certificates (TestMTLS): a CA made for the run
// issues the servers' and the clients', all in the run's Secret
// k8s.ClientCertSecret, which the servers and the clients mount at
// k8s.ClientCertDir. The clients' is its client certificate mtlsClient.
const (
	mtlsClient    = "client"
	mtlsServerCrt = "server.crt"
	mtlsServerKey = "server.key"
	mtlsCA        = "ca.crt"
	volMTLS       = "loadgen-mtls"
)

// mtlsFiles are the PEM files of a run's mutual TLS test.
type mtlsFiles struct {
	ca, serverCert, serverKey, clientCert, clientKey []byte
}

// newMTLSFiles makes the run's CA (ECDSA P-256), and the server's and
// the client's certificates.
func newMTLSFiles() (*mtlsFiles, error) {
	ca, err := tlscert.NewCA(tlscert.ECDSAP256, "loadgen k8s paths")
	if err != nil {
		return nil, err
	}
	server, err := ca.Issue(tlscert.ECDSAP256, nil, ServerName)
	if err != nil {
		return nil, err
	}
	client, err := ca.Issue(tlscert.ECDSAP256, nil, "loadgen-client")
	if err != nil {
		return nil, err
	}
	return &mtlsFiles{ca: ca.CertPEM, serverCert: server.CertPEM, serverKey: server.KeyPEM, clientCert: client.CertPEM, clientKey: client.KeyPEM}, nil
}

// HasMTLS tells whether the plan measures TestMTLS.
func (p *Plan) HasMTLS() bool {
	return slices.ContainsFunc(p.Tests, func(t TestSpec) bool { return t.Name == TestMTLS })
}

// mtlsSecret is the run's Secret of the mutual TLS test's files.
func (p *Plan) mtlsSecret() *corev1.Secret {
	o := p.Options.mesh()
	f := p.mtls
	return &corev1.Secret{ObjectMeta: o.Meta(k8s.ClientCertSecret, o.Namespace, nil), Type: corev1.SecretTypeOpaque, Data: map[string][]byte{
		mtlsCA: f.ca, mtlsServerCrt: f.serverCert, mtlsServerKey: f.serverKey,
		mtlsClient + ".crt": f.clientCert, mtlsClient + ".key": f.clientKey,
	}}
}

// addMTLSServer adds to a server pod the mutual TLS server: `loadgen
// serve httpbin` with the run's server certificate, requiring a client
// certificate from the run's CA (--client-ca), and the Secret's volume.
// Its readiness is a TCP connect: the kubelet has no client certificate.
func (p *Plan) addMTLSServer(spec *corev1.PodSpec, image, addr string, port int, env []corev1.EnvVar) {
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: volMTLS, VolumeSource: corev1.VolumeSource{
		Secret: &corev1.SecretVolumeSource{SecretName: k8s.ClientCertSecret}}})
	dir := k8s.ClientCertDir + "/"
	spec.Containers = append(spec.Containers, corev1.Container{
		Name:            "mtls",
		Image:           image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Args: []string{"serve", "httpbin", "--addr", addr + ":" + strconv.Itoa(port),
			"--cert", dir + mtlsServerCrt, "--key", dir + mtlsServerKey, "--client-ca", dir + mtlsCA},
		Env:             env,
		Ports:           []corev1.ContainerPort{{Name: "mtls", ContainerPort: int32(port), Protocol: corev1.ProtocolTCP}},
		ReadinessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt(port)}}, PeriodSeconds: 2},
		SecurityContext: k8s.Restricted(),
		VolumeMounts:    []corev1.VolumeMount{{Name: volMTLS, MountPath: k8s.ClientCertDir, ReadOnly: true}},
	})
}
