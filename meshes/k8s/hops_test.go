package k8s

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// callOf is the --call URL of a target's container, "" for none.
func callOf(d appsv1.Deployment, container string) string {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name != container {
			continue
		}
		if i := slices.Index(c.Args, "--call"); i >= 0 && i+1 < len(c.Args) {
			return c.Args[i+1]
		}
	}
	return ""
}

// TestHopsChain checks that --hops 3 renders three targets, each calling the
// next on its mesh port, which crosses the mesh's proxy pair, and on its
// direct port, which crosses none; the paths still load the first, and
// the target selector (readiness, cost, checks) takes every hop's pods.
func TestHopsChain(t *testing.T) {
	for _, c := range []struct {
		o    Options
		mesh []string // what each hop's call on the mesh port crosses
	}{
		{Options{Mesh: MeshNone, Hops: 3}, nil},
		{Options{Mesh: MeshIstio, Hops: 3}, []string{"client istio-proxy", "server istio-proxy"}},
		{Options{Mesh: MeshLinkerd, Hops: 3}, []string{"client linkerd-proxy", "server linkerd-proxy"}},
		{Options{Mesh: MeshSidecar, Hops: 3}, nil},
		{Options{Mesh: MeshGateway, Class: "eg", Hops: 3}, nil},
	} {
		t.Run(c.o.Mesh, func(t *testing.T) {
			o, err := c.o.WithDefaults()
			if err != nil {
				t.Fatal(err)
			}
			r, err := Render(o, nil)
			if err != nil {
				t.Fatal(err)
			}
			rr := readRendering(t, r.Objects)
			want := []string{"loadgen-target", "loadgen-target-2", "loadgen-target-3"}
			if got := o.TargetNames(); !slices.Equal(got, want) {
				t.Fatalf("targets %v, want %v", got, want)
			}
			sel, err := labels.Parse(o.TargetSelector())
			if err != nil {
				t.Fatal(err)
			}
			for i, name := range want {
				d, ok := rr.deployments[name]
				if _, svc := rr.services[name]; !ok || !svc {
					t.Fatalf("no Deployment or Service %s", name)
				}
				if !sel.Matches(labels.Set(d.Spec.Template.Labels)) {
					t.Errorf("the target selector %q misses %s", o.TargetSelector(), name)
				}
				meshCall, directCall := callOf(d, "http-httpbin"), callOf(d, "http-direct")
				if i == len(want)-1 {
					if meshCall != "" || directCall != "" {
						t.Errorf("the last hop calls %q and %q", meshCall, directCall)
					}
					continue
				}
				next := "http://" + want[i+1] + "." + o.Namespace + ".svc.cluster.local:"
				if meshCall != next+"8080" || directCall != next+"8081" {
					t.Fatalf("%s calls %q and %q, want %s8080 and %s8081", name, meshCall, directCall, next, next)
				}
				if got := rr.crosses(t, o.Mesh, d.Spec.Template, meshCall); !slices.Equal(got, c.mesh) {
					t.Errorf("%s's call %s crosses %v, want %v", name, meshCall, got, c.mesh)
				}
				if got := rr.crosses(t, o.Mesh, d.Spec.Template, directCall); got != nil {
					t.Errorf("%s's direct call %s crosses %v, want none", name, directCall, got)
				}
			}
			if u, err := o.URL(PortHTTP); err == nil && !strings.Contains(u, "//"+TargetName+".") {
				t.Errorf("the mesh path loads %s, want the first target", u)
			}
		})
	}
}

// TestHopsSidecarUpstream checks that under --mesh sidecar each hop's sidecar
// sends its calls to the next hop, not back to the first target.
func TestHopsSidecarUpstream(t *testing.T) {
	o := Options{Mesh: MeshSidecar, Hops: 3}
	r, err := Render(o, nil)
	if err != nil {
		t.Fatal(err)
	}
	rr := readRendering(t, r.Objects)
	configs := map[string]string{}
	for _, u := range r.Objects {
		if u.GetKind() == "ConfigMap" {
			data, _ := u.Object["data"].(map[string]any)
			for _, v := range data {
				configs[u.GetName()], _ = v.(string)
			}
		}
	}
	for i, next := range []string{"loadgen-target-2", "loadgen-target-3", ""} {
		d := rr.deployments[HopName(i+1)]
		var cm string
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.ConfigMap != nil {
				cm = v.ConfigMap.Name
			}
		}
		conf, ok := configs[cm]
		if !ok {
			t.Fatalf("%s's sidecar ConfigMap %q is not rendered", d.Name, cm)
		}
		if next != "" && !strings.Contains(conf, next+".loadgen.svc.cluster.local:8080") {
			t.Errorf("%s's sidecar (%s) does not send to %s:\n%s", d.Name, cm, next, conf)
		}
	}
}

func TestHopsRefused(t *testing.T) {
	for _, o := range []Options{
		{Mesh: MeshNone, Hops: -1},
		{Mesh: MeshNone, Hops: MaxHops + 1},
		{Mesh: MeshAppMesh, Hops: 2},
		{Mesh: MeshIstioAmbient, Hops: 2},
		{Mesh: MeshSidecar, Hops: 2, MTLS: true},
	} {
		if _, err := Render(o, nil); err == nil || !strings.Contains(err.Error(), "--hops") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s --hops %d: %v, want a one-line refusal", o.Mesh, o.Hops, err)
		}
	}
}

// TestChainHops: the flag's hops win over a sweep file's, a file's chain
// is checked as the flag's would be, and the manifest records a chain only.
func TestChainHops(t *testing.T) {
	for _, tc := range []struct {
		name               string
		opts               Options
		fileHops           int
		flagGiven          bool
		wantHops, wantKept int // o.Hops after, the manifest's hops
		wantErr            string
	}{
		{"neither", Options{}, 0, false, 0, 0, ""},
		{"the file's", Options{}, 3, false, 3, 3, ""},
		{"the flag's over the file's", Options{Hops: 4}, 2, true, 4, 4, ""},
		{"the flag's, no file hops", Options{Hops: 2}, 0, true, 2, 2, ""},
		{"one hop is no chain", Options{Hops: 1}, 0, true, 1, 0, ""},
		{"the file's 1 is no chain", Options{}, 1, false, 0, 0, ""},
		{"the file's too long", Options{}, MaxHops + 1, false, 0, 0, "--hops"},
		{"the file's through appmesh", Options{Mesh: MeshAppMesh}, 2, false, 0, 0, "--hops with --mesh appmesh"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := tc.opts
			kept, err := o.ChainHops(tc.fileHops, tc.flagGiven)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || o.Hops != tc.wantHops || kept != tc.wantKept {
				t.Errorf("Hops %d, recorded %d, err %v; want %d, %d", o.Hops, kept, err, tc.wantHops, tc.wantKept)
			}
		})
	}
}
