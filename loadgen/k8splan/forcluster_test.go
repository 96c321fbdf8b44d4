package k8splan

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"loadgen/loadgen/sweep"
	"loadgen/meshes/k8s"
)

// TestForCluster pins what k8s run asks of a sweep file and in which
// order: what the workers cannot see is refused first (over a chain the
// mesh cannot make), the file's hops yield to --hops and land in both the
// spec (for the manifest) and the options, and a step the mesh cannot
// carry is refused after the plan, whose steps are FromSweep's.
func TestForCluster(t *testing.T) {
	spec := func(edit func(*sweep.Spec)) sweep.Spec {
		s := sweep.Spec{Paths: []sweep.Path{{Name: "mesh", URL: "http://target:8080"}, {Name: "direct", URL: "http://target:8081", Baseline: true}},
			Ladder: sweep.Ladder{{Connections: 4, Threads: 4}}, Payloads: sweep.Payloads{100}, Rates: sweep.Rates{0}, Repeats: 1,
			Duration: sweep.Duration(5 * time.Second)}
		if edit != nil {
			edit(&s)
		}
		return s
	}
	trim := sweep.Duration(time.Second)
	for _, tc := range []struct {
		name      string
		spec      sweep.Spec
		opts      k8s.Options
		hopsGiven bool
		wantErr   string // a prefix of the error; "": none
		wantHops  int    // the spec's after
		wantOpts  int    // the options' Hops after
	}{
		{name: "one target", spec: spec(nil), opts: k8s.Options{Mesh: k8s.MeshIstio, Hops: 1}, wantHops: 0, wantOpts: 1},
		{name: "the file's hops", spec: spec(func(s *sweep.Spec) { s.Hops = 3 }), opts: k8s.Options{Mesh: k8s.MeshIstio, Hops: 1}, wantHops: 3, wantOpts: 3},
		{name: "--hops over the file's", spec: spec(func(s *sweep.Spec) { s.Hops = 2 }), opts: k8s.Options{Mesh: k8s.MeshIstio, Hops: 4}, hopsGiven: true, wantHops: 4, wantOpts: 4},
		{name: "--hops 1 over the file's", spec: spec(func(s *sweep.Spec) { s.Hops = 2 }), opts: k8s.Options{Mesh: k8s.MeshIstio, Hops: 1}, hopsGiven: true, wantHops: 0, wantOpts: 1},
		{name: "the workers cannot see it, over a chain the mesh cannot make", spec: spec(func(s *sweep.Spec) { s.TrimStart, s.Hops = &trim, 2 }),
			opts: k8s.Options{Mesh: k8s.MeshAppMesh, Hops: 1}, wantErr: "trim_start and trim_end are the local sweep's"},
		{name: "a chain the mesh cannot make", spec: spec(func(s *sweep.Spec) { s.Hops = 2 }), opts: k8s.Options{Mesh: k8s.MeshAppMesh, Hops: 1},
			wantErr: "--hops with --mesh appmesh is not rendered"},
		{name: "a step the mesh cannot carry", spec: spec(func(s *sweep.Spec) {
			s.Protocol = "h3"
			s.Paths = []sweep.Path{{Name: "mesh", URL: "https://target:8080", Insecure: true}}
		}), opts: k8s.Options{Mesh: k8s.MeshIstio, Hops: 1}, wantErr: "path mesh (https://target:8080): -p h3 through --mesh istio"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, o := tc.spec, tc.opts
			load, steps, err := ForCluster(&s, &o, tc.hopsGiven)
			if tc.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q…", err, tc.wantErr)
				}
				if !reflect.DeepEqual(load, k8s.Load{}) || steps != nil {
					t.Errorf("a refused sweep gave %+v, %+v", load, steps)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Hops != tc.wantHops || o.Hops != tc.wantOpts {
				t.Errorf("hops: spec %d, options %d; want %d, %d", s.Hops, o.Hops, tc.wantHops, tc.wantOpts)
			}
			plain := tc.spec
			wantLoad, wantSteps, err := FromSweep(&plain)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(load, wantLoad) || !reflect.DeepEqual(steps, wantSteps) {
				t.Errorf("plan:\n got %+v %+v\nwant FromSweep's %+v %+v", load, steps, wantLoad, wantSteps)
			}
		})
	}
}
