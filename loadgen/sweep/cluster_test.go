package sweep

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCheckCluster checks that each key that names something of this machine
// (or that the workers cannot honour) is refused, naming the key, why and
// what to do instead; the same sweep without it is taken.
func TestCheckCluster(t *testing.T) {
	path := func(edit func(*Path)) []Path {
		p := Path{Name: "mesh", URL: "http://target:8080"}
		if edit != nil {
			edit(&p)
		}
		return []Path{p}
	}
	for _, tc := range []struct {
		name string
		spec Spec
		want string // in the error; "" for none
	}{
		{"plain", Spec{Paths: path(nil), Data: `{"a":1}`}, ""},
		{"insecure", Spec{Paths: path(func(p *Path) { p.Insecure = true })}, ""},
		{"protoset", Spec{Paths: path(nil), Protoset: "x.pb"}, "protoset: a file on this machine"},
		{"data file", Spec{Paths: path(nil), Data: "@msg.json"}, "data @msg.json: a file on this machine"},
		{"target watch", Spec{Paths: path(nil), Target: &Watch{Name: "httpbin"}}, "target: watches local processes"},
		{"path watch", Spec{Paths: path(func(p *Path) { p.Watch = &Watch{Name: "nginx"} })}, "path mesh: watch selects local processes"},
		{"cacert", Spec{Paths: path(func(p *Path) { p.CACert = "ca.pem" })}, "path mesh: cacert is a file on this machine"},
		{"netns", Spec{Paths: path(func(p *Path) { p.NetNS = "lab" })}, "path mesh: netns is a namespace of this machine"},
		{"trim start", Spec{Paths: path(nil), TrimStart: new(Duration)}, "trim_start and trim_end are the local sweep's"},
		{"trim end", Spec{Paths: path(nil), TrimEnd: new(Duration)}, "trim_start and trim_end are the local sweep's"},
		// Before, these were dropped on the way to the workers, which ran
		// without them while the results claimed them.
		{"proto", Spec{Paths: path(nil), Call: "a.B/C", Proto: []string{"api.proto"}}, "proto and import_paths: files on this machine are not in the workers' image; leave them out: the workers use server reflection"},
		{"import paths", Spec{Paths: path(nil), Call: "a.B/C", Proto: []string{"api.proto"}, ImportPaths: []string{"protos"}}, "proto and import_paths: files on this machine"},
		{"feed", Spec{Paths: path(nil), Feed: "users.csv"}, "feed users.csv: a file on this machine is not in the workers' image; leave out feed and the endpoint's {{row.…}} fields, or run the sweep with loadgen sweep"},
		{"a path's proxy workers", Spec{Paths: path(func(p *Path) { p.Workers = 4 })}, "path mesh: workers records a local proxy's worker processes; on a cluster k8s run records the ingress-nginx controller's own (set them with --configure-controller --worker-processes N): leave it out"},
		{"local sidecars", Spec{Paths: path(func(p *Path) { p.Sidecar = &Sidecar{Proxy: "nginx", Placement: "both"} })}, "path mesh: sidecar runs proxies in pods of this machine; on a cluster --mesh sidecar"},
		{"arrival with no open loop", Spec{Paths: path(nil), Rates: Rates{0}, Arrival: "poisson"}, "arrival poisson, jitter 0% paces an open loop: add rates to the file (rate: [100]; every step is closed loop)"},
		{"jitter with no open loop", Spec{Paths: path(nil), JitterPct: 10}, "arrival uniform, jitter 10% paces an open loop: add rates to the file"},
		{"arrival with an open-loop step", Spec{Paths: path(nil), Rates: Rates{0, 100}, Arrival: "poisson", JitterPct: 0}, ""},
		{"jitter with an open-loop step", Spec{Paths: path(nil), Rates: Rates{50}, JitterPct: 10}, ""},
		{"streaming call's messages and window", Spec{Paths: path(nil), Protocol: "grpc-stream", Window: 4, Messages: 2}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.spec.CheckCluster()
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("CheckCluster() = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
				t.Errorf("CheckCluster() = %v, want %q…", err, tc.want)
			}
		})
	}
}

// TestManifest checks a sweep's manifest: the spec as asked (it reads back
// the same), its baseline and its paths in order.
func TestManifest(t *testing.T) {
	s, err := Parse(strings.NewReader(`paths:
  - {name: mesh, url: "http://target:8080"}
  - {name: direct, url: "http://target:8081", baseline: true}
ladder: c1t1
payloads: [100]
duration: 2s
hops: 3
`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	if m.Baseline != "direct" || strings.Join(m.Paths, ",") != "mesh,direct" || m.Env.GoVersion == "" {
		t.Errorf("manifest baseline %q, paths %v, env %+v", m.Baseline, m.Paths, m.Env)
	}
	var back Spec
	if err := json.Unmarshal(m.Spec, &back); err != nil {
		t.Fatal(err)
	}
	if back.Hops != 3 || len(back.Paths) != 2 || back.Duration != s.Duration {
		t.Errorf("the manifest's spec reads back as %+v", back)
	}
}
