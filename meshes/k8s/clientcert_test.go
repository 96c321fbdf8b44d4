package k8s

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"loadgen/targets/tlscert"
)

// TestClientCertRendering checks that a path's client certificate is in the
// run's Secret, mounted read-only in the worker container of a step that
// names it, and the worker's `loadgen run` is given the mounted files; a step
// without one has neither the mount nor the flags.
func TestClientCertRendering(t *testing.T) {
	ca, err := tlscert.NewCA(tlscert.ECDSAP256, "test")
	if err != nil {
		t.Fatal(err)
	}
	c, err := ca.Issue(tlscert.ECDSAP256, nil, "client.test")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Mesh: MeshNone, Namespace: "b", RunID: "r1"}
	objs, err := o.ClientCertObjects([]ClientCert{{Name: "path1", Cert: c.CertPEM, Key: c.KeyPEM}})
	if err != nil || len(objs) != 1 {
		t.Fatalf("ClientCertObjects: %v %v", objs, err)
	}
	sec := objs[0].(*corev1.Secret)
	if sec.Name != ClientCertSecret || sec.Namespace != "b" || sec.Labels[LabelRun] != "r1" ||
		string(sec.Data["path1.crt"]) != string(c.CertPEM) || string(sec.Data["path1.key"]) != string(c.KeyPEM) {
		t.Errorf("Secret %s/%s labels %v keys %v: want %s/b of run r1 with path1.crt and path1.key", sec.Namespace, sec.Name, sec.Labels, slices.Sorted(maps.Keys(sec.Data)), ClientCertSecret)
	}
	if none, err := o.ClientCertObjects(nil); err != nil || len(none) != 0 {
		t.Errorf("no certificates: %v %v, want no Secret", none, err)
	}
	for _, bad := range [][]ClientCert{{{Name: "a/b", Cert: c.CertPEM, Key: c.KeyPEM}}, {{Name: "a", Cert: c.CertPEM}},
		{{Name: "a", Cert: c.CertPEM, Key: c.KeyPEM}, {Name: "a", Cert: c.CertPEM, Key: c.KeyPEM}}} {
		if _, err := o.ClientCertObjects(bad); err == nil {
			t.Errorf("ClientCertObjects(%q…): no error", bad[0].Name)
		}
	}

	l := Load{Endpoint: "/bytes/{size}", Duration: time.Second, ClientCerts: []ClientCert{{Name: "path1", Cert: c.CertPEM, Key: c.KeyPEM}}}
	for _, tc := range []struct {
		cert string
		want bool
	}{{"path1", true}, {"", false}} {
		args, err := o.RunArgs(l, Step{URL: "https://target:8443", Payload: 10, Insecure: true, ClientCert: tc.cert}, Addresses{})
		if err != nil {
			t.Fatal(err)
		}
		job := o.Job(JobSpec{Name: "j", Workers: 2, Connections: 2, Threads: 1, RunArgs: args, ClientCert: tc.cert != ""})
		pod := job.Spec.Template.Spec
		worker := pod.Containers[0]
		line := strings.Join(worker.Args, " ")
		wantArgs := "--cert " + ClientCertDir + "/path1.crt --key " + ClientCertDir + "/path1.key"
		if strings.Contains(line, wantArgs) != tc.want || strings.Contains(line, "--cert") != tc.want {
			t.Errorf("cert %q: worker args %q: want %q: %v", tc.cert, line, wantArgs, tc.want)
		}
		if !strings.Contains(line, "-- run ") {
			t.Errorf("worker args %q: the run's flags are not after `-- run`", line)
		}
		var vol *corev1.Volume
		for i := range pod.Volumes {
			if s := pod.Volumes[i].Secret; s != nil && s.SecretName == ClientCertSecret {
				vol = &pod.Volumes[i]
			}
		}
		var mount *corev1.VolumeMount
		for i := range worker.VolumeMounts {
			if vol != nil && worker.VolumeMounts[i].Name == vol.Name {
				mount = &worker.VolumeMounts[i]
			}
		}
		switch {
		case !tc.want && (vol != nil || mount != nil):
			t.Errorf("a step without a client certificate mounts the Secret")
		case tc.want && (vol == nil || mount == nil):
			t.Errorf("the worker pod does not mount Secret %s: volumes %+v, mounts %+v", ClientCertSecret, pod.Volumes, worker.VolumeMounts)
		case tc.want && (mount.MountPath != ClientCertDir || !mount.ReadOnly):
			t.Errorf("mount %+v: want %s, read-only", mount, ClientCertDir)
		}
	}
}
