package k8s

import (
	"strings"
	"testing"
	"time"
)

func TestResolveTarget(t *testing.T) {
	for _, tc := range []struct {
		o         Options
		url, addr string
		want      string
	}{
		{Options{Mesh: MeshIstio, Namespace: "bench"}, "http://target:8080", "", "http://loadgen-target.bench.svc.cluster.local:8080"},
		{Options{Mesh: MeshIstio, Namespace: "bench"}, "http://target:8081/x", "", "http://loadgen-target.bench.svc.cluster.local:8081/x"},
		{Options{Mesh: MeshNone, Namespace: "bench"}, "tcp://target:9000", "", "tcp://loadgen-target.bench.svc.cluster.local:9000"},
		{Options{Mesh: MeshIngressNginx, Namespace: "b", IngressNamespace: "ingress-nginx"}, "https://target:8080", "", "https://ingress-nginx-controller.ingress-nginx.svc.cluster.local:443"},
		{Options{Mesh: MeshIngressNginx, Namespace: "b", IngressNamespace: "ingress-nginx"}, "http://target:8080", "198.18.0.7", "http://198.18.0.7:80"},
		{Options{Mesh: MeshGateway, Class: "nginx", Namespace: "b"}, "http://target:9090", "", "http://loadgen-gateway-nginx.b.svc.cluster.local:9090"},
		{Options{Mesh: MeshGateway, Class: "nginx", Namespace: "b"}, "http://target:8080", "gw.example", "http://gw.example:80"},
		{Options{Mesh: MeshGateway, Class: "nginx", Namespace: "b"}, "http://target:8081", "gw.example", "http://loadgen-target.b.svc.cluster.local:8081"},
		{Options{Mesh: MeshIstio, Namespace: "b"}, "http://10.0.0.1:80/get", "", "http://10.0.0.1:80/get"},
	} {
		got, err := tc.o.resolve(tc.url, tc.addr)
		if err != nil || got != tc.want {
			t.Errorf("%s %s: %q %v, want %q", tc.o.Mesh, tc.url, got, err, tc.want)
		}
	}
}

func TestRunArgs(t *testing.T) {
	o := Options{Mesh: MeshNone, Namespace: "b"}
	l := Load{Protocol: "h2c", Endpoint: "/bytes/{size}", Duration: 30 * time.Second, Warmup: 5 * time.Second, Timeout: 2 * time.Second}
	a, err := o.runArgs(l, Step{URL: "http://target:8080", Payload: 1024, NewConn: true}, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(a, " "); got != "-q -d 30s -p h2c --warmup 5s --timeout 2s --new-conn http://loadgen-target.b.svc.cluster.local:8080/bytes/1024" {
		t.Errorf("run args: %s", got)
	}
	a, _ = o.runArgs(Load{Protocol: "tcp-rr", Duration: time.Second}, Step{URL: "tcp://target:9000", Payload: 64}, "")
	if got := strings.Join(a, " "); !strings.Contains(got, "--size 64") {
		t.Errorf("tcp run args: %s", got)
	}
}
