package k8s

import (
	"strings"
	"testing"
	"time"
)

func TestResolveTarget(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		url  string
		addr Addresses
		want string
	}{
		{Options{Mesh: MeshIstio, Namespace: "bench"}, "http://target:8080", Addresses{}, "http://loadgen-target.bench.svc.cluster.local:8080"},
		{Options{Mesh: MeshIstio, Namespace: "bench"}, "http://target:8081/x", Addresses{}, "http://loadgen-target.bench.svc.cluster.local:8081/x"},
		{Options{Mesh: MeshIstioAmbient, Namespace: "bench"}, "http://target:8081/x", Addresses{}, "http://loadgen-target-direct.bench.svc.cluster.local:8081/x"},
		{Options{Mesh: MeshNone, Namespace: "bench"}, "tcp://target:9000", Addresses{}, "tcp://loadgen-target.bench.svc.cluster.local:9000"},
		{Options{Mesh: MeshIngressNginx, Namespace: "b", IngressNamespace: "ingress-nginx"}, "https://target:8080", Addresses{}, "https://ingress-nginx-controller.ingress-nginx.svc.cluster.local:443"},
		{Options{Mesh: MeshIngressNginx, Namespace: "b", IngressNamespace: "ingress-nginx"}, "http://target:8080", both("198.18.0.7"), "http://198.18.0.7:80"},
		{Options{Mesh: MeshIngress, Class: "traefik", Namespace: "b"}, "https://target:8080", both("198.18.112.5"), "https://198.18.112.5:443"},
		{Options{Mesh: MeshGateway, Class: "nginx", Namespace: "b"}, "http://target:9090", Addresses{}, "http://loadgen-gateway-nginx.b.svc.cluster.local:9090"},
		{Options{Mesh: MeshGateway, Class: "istio", Namespace: "b"}, "http://target:8080", Addresses{}, "http://loadgen-gateway-istio.b.svc.cluster.local:80"},
		{Options{Mesh: MeshGateway, Class: "cilium", Namespace: "b"}, "http://target:8080", Addresses{}, "http://cilium-gateway-loadgen-gateway.b.svc.cluster.local:80"},
		{Options{Mesh: MeshGateway, Class: "eg", Namespace: "b"}, "http://target:8080", both("198.18.0.9"), "http://198.18.0.9:80"},
		{Options{Mesh: MeshGateway, Class: "nginx", Namespace: "b"}, "http://target:8080", both("gw.example"), "http://gw.example:80"},
		{Options{Mesh: MeshGateway, Class: ClassLattice, Namespace: "b"}, "http://target:8080", Addresses{HTTP: "h.lattice", GRPC: "g.lattice"}, "http://h.lattice:80"},
		{Options{Mesh: MeshGateway, Class: ClassLattice, Namespace: "b"}, "http://target:9090", Addresses{HTTP: "h.lattice", GRPC: "g.lattice"}, "http://g.lattice:9090"},
		{Options{Mesh: MeshGateway, Class: "nginx", Namespace: "b"}, "http://target:8081", both("gw.example"), "http://loadgen-target.b.svc.cluster.local:8081"},
		{Options{Mesh: MeshIstio, Namespace: "b"}, "http://10.0.0.1:80/get", Addresses{}, "http://10.0.0.1:80/get"},
	} {
		got, err := tc.o.resolve(tc.url, tc.addr)
		if err != nil || got != tc.want {
			t.Errorf("%s %s: %q %v, want %q", tc.o.Mesh, tc.url, got, err, tc.want)
		}
	}
	// Envoy Gateway, Traefik and Lattice publish their address only in the
	// cluster: no Service name is guessed; nor an ingress controller's but
	// ingress-nginx's (its chart's).
	if got, err := (Options{Mesh: MeshIngress, Class: "traefik", Namespace: "b"}).resolve("http://target:8080", Addresses{}); err == nil {
		t.Errorf("ingress class traefik without its address: %q, want an error", got)
	}
	for _, class := range []string{"eg", "traefik", ClassLattice} {
		o := Options{Mesh: MeshGateway, Class: class, Namespace: "b"}
		if got, err := o.resolve("http://target:8080", Addresses{}); err == nil {
			t.Errorf("class %s without its address: %q, want an error", class, got)
		}
	}
	// --ingress-service names the Service (--via service): known without
	// the cluster.
	for _, o := range []Options{{Mesh: MeshIngress, Class: "traefik", Namespace: "b", IngressService: "traefik/traefik"},
		{Mesh: MeshGateway, Class: "eg", Namespace: "b", IngressService: "traefik/traefik"}} {
		if got, err := o.resolve("http://target:8080", Addresses{}); err != nil || got != "http://traefik.traefik.svc.cluster.local:80" {
			t.Errorf("%s --class %s --ingress-service traefik/traefik: %q %v", o.Mesh, o.Class, got, err)
		}
	}
}

// TestNoAddressSaysWhatRunReads checks that a dry run that cannot resolve the
// mesh path's address says which address k8s run will read: under --via
// service (the default) the Service the implementation labels with the
// Gateway's name, or the ingress controller's Service, and the flag that
// names it; under --via published the Gateway's status.addresses or the
// Ingress's status.
func TestNoAddressSaysWhatRunReads(t *testing.T) {
	for _, tc := range []struct {
		o       Options
		want    []string
		notWant string
	}{
		{Options{Mesh: MeshGateway, Class: "eg", Namespace: "b"},
			[]string{"the Service its implementation labels gateway.networking.k8s.io/gateway-name=loadgen-gateway for Gateway b/loadgen-gateway (--via service)", "--ingress-service"},
			"status.addresses"},
		{Options{Mesh: MeshGateway, Class: "eg", Namespace: "b", Via: ViaPublished},
			[]string{"Gateway b/loadgen-gateway's status.addresses"}, "--via service"},
		{Options{Mesh: MeshIngress, Class: "traefik", Namespace: "b"},
			[]string{"its controller's Service (--via service)", "--ingress-service"}, ""},
		{Options{Mesh: MeshIngress, Class: "traefik", Namespace: "b", Via: ViaPublished},
			[]string{"Ingress b/loadgen-target's status.loadBalancer.ingress, which only the cluster knows"}, "--via service"},
		{Options{Mesh: MeshGateway, Class: ClassLattice, Namespace: "b"}, []string{AnnLatticeDomain}, "--via service"},
	} {
		_, err := tc.o.resolve("http://target:8080", Addresses{})
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s --class %s --via %q: %v, want %q", tc.o.Mesh, tc.o.Class, tc.o.Via, err, w)
			}
		}
		if err != nil && tc.notWant != "" && strings.Contains(err.Error(), tc.notWant) {
			t.Errorf("%s --class %s --via %q: %v says %q", tc.o.Mesh, tc.o.Class, tc.o.Via, err, tc.notWant)
		}
	}
}

// TestRunArgsIngressHost checks that through ingress-nginx the workers send
// the Ingress rule's host (and SNI over TLS); the direct path does not.
func TestRunArgsIngressHost(t *testing.T) {
	for _, o := range []Options{{Mesh: MeshIngressNginx, Namespace: "b", IngressNamespace: "ingress-nginx"}, {Mesh: MeshIngress, Class: "traefik", Namespace: "b"}} {
		testRunArgsIngressHost(t, o)
	}
}

func testRunArgsIngressHost(t *testing.T, o Options) {
	l := Load{Duration: time.Second}
	for _, tc := range []struct{ url, want, not string }{
		{"http://target:8080", "-H Host: " + IngressHost, "--sni"},
		{"https://target:8080", "-H Host: " + IngressHost + " --sni " + IngressHost, ""},
		{"http://target:8081", "", "Host:"},
	} {
		a, err := o.RunArgs(l, Step{URL: tc.url}, both("198.18.112.5"))
		got := strings.Join(a, " ")
		if err != nil || !strings.Contains(got, tc.want) || (tc.not != "" && strings.Contains(got, tc.not)) {
			t.Errorf("%s: %q %v, want %q and not %q", tc.url, got, err, tc.want, tc.not)
		}
	}
}

func TestRunArgs(t *testing.T) {
	o := Options{Mesh: MeshNone, Namespace: "b"}
	l := Load{Protocol: "h2c", Endpoint: "/bytes/{size}", Duration: 30 * time.Second, Warmup: 5 * time.Second, Timeout: 2 * time.Second}
	a, err := o.RunArgs(l, Step{URL: "http://target:8080", Payload: 1024, NewConn: true}, Addresses{})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(a, " "); got != "-q -d 30s -p h2c --warmup 5s --timeout 2s --new-conn http://loadgen-target.b.svc.cluster.local:8080/bytes/1024" {
		t.Errorf("run args: %s", got)
	}
	a, _ = o.RunArgs(Load{Protocol: "tcp-rr", Duration: time.Second}, Step{URL: "tcp://target:9000", Payload: 64}, Addresses{})
	if got := strings.Join(a, " "); !strings.Contains(got, "--size 64") {
		t.Errorf("tcp run args: %s", got)
	}
}

// both is one address for every route.
func both(a string) Addresses { return Addresses{HTTP: a, GRPC: a} }

// TestDirectGRPCAndTCP checks that the direct path of gRPC and raw TCP load
// goes to the target's uncaptured gRPC and TCP ports, given as such or as the
// direct path's 8081, behind an ingress or a gateway too, and to the
// ambient mesh's direct target.
func TestDirectGRPCAndTCP(t *testing.T) {
	l := func(p string) Load { return Load{Protocol: p, Duration: time.Second} }
	for _, tc := range []struct {
		o    Options
		load Load
		url  string
		want string
	}{
		{Options{Mesh: MeshIstio, Namespace: "b"}, l("grpc"), "http://target:8081", "http://loadgen-target.b.svc.cluster.local:9091"},
		{Options{Mesh: MeshIstio, Namespace: "b"}, l("grpc"), "http://target:9091", "http://loadgen-target.b.svc.cluster.local:9091"},
		{Options{Mesh: MeshLinkerd, Namespace: "b"}, l("tcp-rr"), "tcp://target:8081", "tcp://loadgen-target.b.svc.cluster.local:9001"},
		{Options{Mesh: MeshIstioAmbient, Namespace: "b"}, l("tcp-crr"), "tcp://target:9001", "tcp://loadgen-target-direct.b.svc.cluster.local:9001"},
		{Options{Mesh: MeshGateway, Class: "nginx", Namespace: "b"}, l("grpc-stream"), "http://target:8081", "http://loadgen-target.b.svc.cluster.local:9091"},
		{Options{Mesh: MeshIngressNginx, Namespace: "b", IngressNamespace: "ingress-nginx"}, l("tcp-stream"), "tcp://target:9001", "tcp://loadgen-target.b.svc.cluster.local:9001"},
		{Options{Mesh: MeshIstio, Namespace: "b"}, l("http1"), "http://target:8081", "http://loadgen-target.b.svc.cluster.local:8081"},
	} {
		a, err := tc.o.RunArgs(tc.load, Step{URL: tc.url}, both("198.18.0.7"))
		if err != nil || a[len(a)-1] != tc.want {
			t.Errorf("%s -p %s %s: %v %v, want %s", tc.o.Mesh, tc.load.Protocol, tc.url, a, err, tc.want)
		}
		if !DirectURL(tc.url) {
			t.Errorf("%s is not the direct path", tc.url)
		}
	}
}

// TestRunArgsLoadKeys: the sweep's arrival process and jitter reach the
// workers' `loadgen run` on the steps with a rate (run refuses them on a
// closed loop), and a streaming call's messages and window on every step;
// before, RunArgs dropped them and the workers ran uniform arrivals and
// run's defaults.
func TestRunArgsLoadKeys(t *testing.T) {
	o := Options{Mesh: MeshNone, Namespace: "b"}
	const url = " http://loadgen-target.b.svc.cluster.local:8080"
	open, closed := Step{URL: "http://target:8080", Rate: 100}, Step{URL: "http://target:8080"}
	for _, tc := range []struct {
		name string
		load Load
		step Step
		want string // the args between -d and the URL
	}{
		{"poisson", Load{Arrival: "poisson"}, open, " --arrival poisson --size 0"},
		{"uniform named", Load{Arrival: "uniform"}, open, " --arrival uniform --size 0"},
		{"jitter", Load{JitterPct: 12.5}, open, " --jitter 12.5% --size 0"},
		{"uniform with jitter", Load{Arrival: "uniform", JitterPct: 10}, open, " --arrival uniform --jitter 10% --size 0"},
		{"closed loop: no arrival", Load{Arrival: "poisson", JitterPct: 10}, closed, " --size 0"},
		{"nothing asked", Load{}, open, " --size 0"},
		{"messages", Load{Protocol: "grpc-server-stream", Messages: 50}, Step{URL: "http://target:9090"}, " -p grpc-server-stream --messages 50 --size 0"},
		{"window", Load{Protocol: "grpc-stream", Window: 8}, Step{URL: "http://target:9090"}, " -p grpc-stream --window 8 --size 0"},
		{"all, with a call", Load{Protocol: "grpc-client-stream", Arrival: "poisson", Messages: 3, Call: "echo.Echo/Say", Data: "{}"},
			Step{URL: "http://target:9090", Rate: 10}, " -p grpc-client-stream --arrival poisson --messages 3 --call echo.Echo/Say --data {}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.load.Duration = time.Second
			a, err := o.RunArgs(tc.load, tc.step, Addresses{})
			if err != nil {
				t.Fatal(err)
			}
			port := ":8080"
			if strings.Contains(tc.step.URL, ":9090") {
				port = ":9090"
			}
			want := "-q -d 1s" + tc.want + strings.Replace(url, ":8080", port, 1)
			if got := strings.Join(a, " "); got != want {
				t.Errorf("run args:\n got %s\nwant %s", got, want)
			}
		})
	}
}
