package sweep

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCheckCluster checks that each key that names something of this machine
// is refused, naming the key; the same sweep without it is taken.
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
