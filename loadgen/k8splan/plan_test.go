package k8splan

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"loadgen/loadgen/sweep"
	"loadgen/meshes/k8s"
)

// TestFromSweep pins the translation field for field: what every step
// shares (protocol, endpoint, durations, call, data, arrival process,
// jitter, messages, window, the paths' client certificates named by their
// place in the file) and each step's path,
// baseline, URL, new-conn, insecure, certificate, rung, payload, rate,
// repeat, index and ID, in the sweep's order (paths fastest, then rungs,
// payloads, rates, repeats). A field dropped or swapped fails it.
func TestFromSweep(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	crt, key, both := write("c.crt", "CERT"), write("c.key", "KEY"), write("both.pem", "CERT+KEY")
	c4t2, c1t1 := sweep.Rung{Connections: 4, Threads: 2}, sweep.Rung{Connections: 1, Threads: 1}
	base := func(paths ...sweep.Path) sweep.Spec {
		return sweep.Spec{Paths: paths, Ladder: sweep.Ladder{c4t2}, Payloads: sweep.Payloads{100}, Rates: sweep.Rates{0}, Repeats: 1,
			Duration: sweep.Duration(5 * time.Second)}
	}
	mesh := sweep.Path{Name: "mesh", URL: "http://target:8080"}
	direct := sweep.Path{Name: "direct", URL: "http://target:8081", Baseline: true}

	order := base(mesh, direct)
	order.Ladder = sweep.Ladder{c1t1, c4t2}
	order.Payloads = sweep.Payloads{100, 2048}

	rates := base(mesh)
	rates.Rates = sweep.Rates{0, 50.5}
	rates.Repeats = 2

	load := base(
		sweep.Path{Name: "tls", URL: "https://target:8080", Insecure: true, NewConn: true},
		sweep.Path{Name: "plain", URL: "http://target:8081", Baseline: true},
		sweep.Path{Name: "mtls", URL: "https://target:8080", Insecure: true, Cert: crt, Key: key},
		sweep.Path{Name: "mtls-one-file", URL: "https://target:8080", Cert: both},
	)
	load.Protocol, load.Endpoint, load.Call, load.Data = "grpc", "/echo/{size}", "echo.Echo/Say", `{"msg":"hi"}`
	load.Duration, load.Warmup, load.Timeout = sweep.Duration(30*time.Second), sweep.Duration(5*time.Second), sweep.Duration(2*time.Second)
	// The translation checks nothing (Parse and CheckCluster do): a
	// grpc-stream sweep has no messages, nor one with no rate an arrival.
	load.Arrival, load.JitterPct, load.Messages, load.Window = "poisson", 12.5, 50, 8

	meshStep := func(i int, id string, r sweep.Rung, payload int, rate float64, rep int) k8s.Step {
		return k8s.Step{Index: i, ID: id, Path: "mesh", URL: "http://target:8080", Connections: r.Connections, Threads: r.Threads, Payload: payload, Rate: rate, Repeat: rep}
	}
	directStep := func(i int, id string, r sweep.Rung, payload int) k8s.Step {
		return k8s.Step{Index: i, ID: id, Path: "direct", Baseline: true, URL: "http://target:8081", Connections: r.Connections, Threads: r.Threads, Payload: payload, Repeat: 1}
	}
	plainLoad := k8s.Load{Duration: 5 * time.Second}

	for _, tc := range []struct {
		name      string
		spec      sweep.Spec
		wantLoad  k8s.Load
		wantSteps []k8s.Step
	}{
		{"paths fastest, then rungs, then payloads", order, plainLoad, []k8s.Step{
			meshStep(0, "mesh_c1t1_100B_closed_r1", c1t1, 100, 0, 1),
			directStep(1, "direct_c1t1_100B_closed_r1", c1t1, 100),
			meshStep(2, "mesh_c4t2_100B_closed_r1", c4t2, 100, 0, 1),
			directStep(3, "direct_c4t2_100B_closed_r1", c4t2, 100),
			meshStep(4, "mesh_c1t1_2KiB_closed_r1", c1t1, 2048, 0, 1),
			directStep(5, "direct_c1t1_2KiB_closed_r1", c1t1, 2048),
			meshStep(6, "mesh_c4t2_2KiB_closed_r1", c4t2, 2048, 0, 1),
			directStep(7, "direct_c4t2_2KiB_closed_r1", c4t2, 2048),
		}},
		{"rates, then repeats", rates, plainLoad, []k8s.Step{
			meshStep(0, "mesh_c4t2_100B_closed_r1", c4t2, 100, 0, 1),
			meshStep(1, "mesh_c4t2_100B_r50.5_r1", c4t2, 100, 50.5, 1),
			meshStep(2, "mesh_c4t2_100B_closed_r2", c4t2, 100, 0, 2),
			meshStep(3, "mesh_c4t2_100B_r50.5_r2", c4t2, 100, 50.5, 2),
		}},
		{"the load and each path's settings", load,
			k8s.Load{Protocol: "grpc", Endpoint: "/echo/{size}", Duration: 30 * time.Second, Warmup: 5 * time.Second, Timeout: 2 * time.Second,
				Call: "echo.Echo/Say", Data: `{"msg":"hi"}`, Arrival: "poisson", JitterPct: 12.5, Messages: 50, Window: 8,
				ClientCerts: []k8s.ClientCert{{Name: "path2", Cert: []byte("CERT"), Key: []byte("KEY")}, {Name: "path3", Cert: []byte("CERT+KEY"), Key: []byte("CERT+KEY")}}},
			[]k8s.Step{
				{Index: 0, ID: "tls_c4t2_100B_closed_r1", Path: "tls", URL: "https://target:8080", NewConn: true, Insecure: true, Connections: 4, Threads: 2, Payload: 100, Repeat: 1},
				{Index: 1, ID: "plain_c4t2_100B_closed_r1", Path: "plain", Baseline: true, URL: "http://target:8081", Connections: 4, Threads: 2, Payload: 100, Repeat: 1},
				{Index: 2, ID: "mtls_c4t2_100B_closed_r1", Path: "mtls", URL: "https://target:8080", Insecure: true, ClientCert: "path2", Connections: 4, Threads: 2, Payload: 100, Repeat: 1},
				{Index: 3, ID: "mtls-one-file_c4t2_100B_closed_r1", Path: "mtls-one-file", URL: "https://target:8080", ClientCert: "path3", Connections: 4, Threads: 2, Payload: 100, Repeat: 1},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			gotLoad, gotSteps, err := FromSweep(&tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gotLoad, tc.wantLoad) {
				t.Errorf("load:\n got %+v\nwant %+v", gotLoad, tc.wantLoad)
			}
			if len(gotSteps) != len(tc.wantSteps) {
				t.Fatalf("%d steps, want %d: %+v", len(gotSteps), len(tc.wantSteps), gotSteps)
			}
			for i := range gotSteps {
				if gotSteps[i] != tc.wantSteps[i] {
					t.Errorf("step %d:\n got %+v\nwant %+v", i, gotSteps[i], tc.wantSteps[i])
				}
			}
		})
	}

	// Every field of k8s.Load (but Labels, the caller's) and of k8s.Step
	// is set by some case above: a field added to either without this
	// translation or this test fails here.
	_, steps, _ := FromSweep(&load)
	_, more, _ := FromSweep(&rates)
	steps = append(steps, more...)
	gotLoad, _, _ := FromSweep(&load)
	for _, c := range []struct {
		what string
		vals []reflect.Value
		skip string
	}{
		{"k8s.Load", []reflect.Value{reflect.ValueOf(gotLoad)}, "Labels"},
		{"k8s.Step", func() (vs []reflect.Value) {
			for _, st := range steps {
				vs = append(vs, reflect.ValueOf(st))
			}
			return vs
		}(), ""},
	} {
		typ := c.vals[0].Type()
		for f := range typ.NumField() {
			name := typ.Field(f).Name
			if name == c.skip {
				continue
			}
			set := false
			for _, v := range c.vals {
				set = set || !v.Field(f).IsZero()
			}
			if !set {
				t.Errorf("%s.%s is never set by the translation in this test: translate it and pin it here", c.what, name)
			}
		}
	}
}

// TestFromSweepCertError: a path's certificate that cannot be read fails
// the plan naming the path, before any step.
func TestFromSweepCertError(t *testing.T) {
	s := sweep.Spec{Paths: []sweep.Path{{Name: "mtls", URL: "https://target:8080", Cert: filepath.Join(t.TempDir(), "missing.crt")}},
		Ladder: sweep.Ladder{{Connections: 1, Threads: 1}}, Payloads: sweep.Payloads{100}, Rates: sweep.Rates{0}, Repeats: 1}
	load, steps, err := FromSweep(&s)
	if err == nil || !strings.HasPrefix(err.Error(), "path mtls: cert: ") {
		t.Fatalf("err = %v, want path mtls: cert: …", err)
	}
	if !reflect.DeepEqual(load, k8s.Load{}) || steps != nil {
		t.Errorf("a failed plan gave %+v, %+v", load, steps)
	}
}
