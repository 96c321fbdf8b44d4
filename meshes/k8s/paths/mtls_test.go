package paths

import (
	"crypto/tls"
	"crypto/x509"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"loadgen/meshes/k8s"
)

// TestPlanMTLS checks that --tests mtls adds the run's Secret of a CA's
// server and client certificates, a mutual TLS server in both server pods
// (serve httpbin --client-ca, its files mounted from the Secret), the mtls
// port on both Services, and clients that dial https:// on it with the
// client's certificate mounted; the default plan has none of it.
func TestPlanMTLS(t *testing.T) {
	two := []corev1.Node{node("a", false), node("b", false)}
	def, err := NewPlan(Options{Repeats: 1}, two)
	if err != nil {
		t.Fatal(err)
	}
	if def.HasMTLS() || slices.ContainsFunc(def.Tests, func(s TestSpec) bool { return s.Name == TestMTLS }) {
		t.Fatal("the default plan measures mtls: it is only asked for")
	}
	for _, obj := range def.Objects() {
		if s, ok := obj.(*corev1.Secret); ok {
			t.Errorf("the default plan has Secret %s", s.Name)
		}
	}
	p, err := NewPlan(Options{Tests: []string{TestHTTP, TestMTLS}, Repeats: 1, RunID: "r1"}, two)
	if err != nil {
		t.Fatal(err)
	}
	var secret *corev1.Secret
	pods := map[string]*corev1.Pod{}
	var svcs []*corev1.Service
	for _, obj := range p.Objects() {
		switch o := obj.(type) {
		case *corev1.Secret:
			secret = o
		case *corev1.Pod:
			pods[o.Name] = o
		case *corev1.Service:
			svcs = append(svcs, o)
		}
	}
	if secret == nil || secret.Name != k8s.ClientCertSecret || secret.Labels[k8s.LabelRun] != "r1" {
		t.Fatalf("Secret %+v: want %s of run r1", secret, k8s.ClientCertSecret)
	}
	// The client's certificate is the CA's, and the pair loads.
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(secret.Data[mtlsCA]) {
		t.Fatal("no CA in the Secret")
	}
	for _, pair := range [][2]string{{mtlsClient + ".crt", mtlsClient + ".key"}, {mtlsServerCrt, mtlsServerKey}} {
		c, err := tls.X509KeyPair(secret.Data[pair[0]], secret.Data[pair[1]])
		if err != nil {
			t.Fatalf("%s: %v", pair[0], err)
		}
		if _, err := c.Leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("%s is not the CA's client certificate: %v", pair[0], err)
		}
	}
	for name, port := range map[string]string{ServerName: "0.0.0.0:8443", HostServerName: "$(HOST_IP):18443"} {
		pod := pods[name]
		i := slices.IndexFunc(pod.Spec.Containers, func(c corev1.Container) bool { return c.Name == "mtls" })
		if i < 0 {
			t.Fatalf("server pod %s has no mtls container", name)
		}
		c := pod.Spec.Containers[i]
		want := "serve httpbin --addr " + port + " --cert " + k8s.ClientCertDir + "/server.crt --key " + k8s.ClientCertDir + "/server.key --client-ca " + k8s.ClientCertDir + "/ca.crt"
		if got := strings.Join(c.Args, " "); got != want {
			t.Errorf("%s's mtls server: %s, want %s", name, got, want)
		}
		if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != k8s.ClientCertDir || !c.VolumeMounts[0].ReadOnly ||
			!slices.ContainsFunc(pod.Spec.Volumes, func(v corev1.Volume) bool {
				return v.Name == c.VolumeMounts[0].Name && v.Secret != nil && v.Secret.SecretName == k8s.ClientCertSecret
			}) {
			t.Errorf("%s's mtls server does not mount Secret %s read-only at %s: %+v %+v", name, k8s.ClientCertSecret, k8s.ClientCertDir, c.VolumeMounts, pod.Spec.Volumes)
		}
		if c.ReadinessProbe == nil || c.ReadinessProbe.TCPSocket == nil {
			t.Errorf("%s's mtls server is probed by %+v: the kubelet has no client certificate, want a TCP probe", name, c.ReadinessProbe)
		}
	}
	for _, svc := range svcs {
		if !slices.ContainsFunc(svc.Spec.Ports, func(sp corev1.ServicePort) bool { return sp.Port == PortMTLS }) {
			t.Errorf("Service %s has no mtls port", svc.Name)
		}
	}
	ep := Endpoints{NodeIP: "198.18.64.1", PodIP: "198.18.65.7", ClusterIP: "198.18.112.20", NodePortTCP: 30900, NodePortHTTP: 30080, NodePortMTLS: 30443}
	want := map[string]string{HostHost: "https://198.18.64.1:18443/bytes/1024", PodPodSameNode: "https://198.18.65.7:8443/bytes/1024",
		PodClusterIP: "https://198.18.112.20:8443/bytes/1024", PodNodePort: "https://198.18.64.1:30443/bytes/1024"}
	n := 0
	for _, m := range p.Measurements() {
		job := p.ClientJob(m, ep)
		spec := job.Spec.Template.Spec
		args := spec.Containers[0].Args
		line := strings.Join(args, " ")
		mounted := slices.ContainsFunc(spec.Containers[0].VolumeMounts, func(v corev1.VolumeMount) bool { return v.MountPath == k8s.ClientCertDir })
		certArgs := "--insecure --cert " + k8s.ClientCertDir + "/client.crt --key " + k8s.ClientCertDir + "/client.key"
		if m.Test.Name != TestMTLS {
			if mounted || strings.Contains(line, "--cert") {
				t.Errorf("%s %s: the client has the certificate: %s", m.Path.Name, m.Test.Name, line)
			}
			continue
		}
		if !mounted || !strings.Contains(line, certArgs) {
			t.Errorf("%s mtls: mounted %v, args %s: want the Secret mounted and %s", m.Path.Name, mounted, line, certArgs)
		}
		if w, ok := want[m.Path.Name]; ok {
			n++
			if args[len(args)-1] != w {
				t.Errorf("%s mtls dials %s, want %s", m.Path.Name, args[len(args)-1], w)
			}
		}
	}
	if n != len(want) {
		t.Errorf("%d mtls measurements of the one-node paths, want %d", n, len(want))
	}
	if _, err := NewPlan(Options{Tests: []string{"quic"}}, two); err == nil || !strings.Contains(err.Error(), "mtls") {
		t.Errorf("an unknown test: %v, want the list with mtls", err)
	}
}
