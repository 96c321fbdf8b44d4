package k8splan

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"loadgen/loadgen/sweep"
	"loadgen/meshes/k8s"
)

// TestEveryKeyCarriedOrRefused: each key of a sweep file (sweep.Spec's
// and sweep.Path's YAML keys) either reaches the workers — setting it
// changes what they are given: a step's `loadgen run` flags
// (Options.RunArgs), its record (k8s.Step: shares, path, baseline, ID),
// the client certificates or the chain's length — or is refused by
// ForCluster naming the key. Before, arrival, jitter_pct, messages,
// window, proto, import_paths, feed and a path's workers (and sidecar)
// were dropped silently: the workers ran without them while the results
// claimed them. A key added to the sweep without a decision here fails.
func TestEveryKeyCarriedOrRefused(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	crt, key := write("c.crt", "CERT"), write("c.key", "KEY")
	mesh := func(s *sweep.Spec) *sweep.Path { return &s.Paths[0] }
	tlsPath := func(s *sweep.Spec) { mesh(s).URL, mesh(s).Insecure = "https://target:8080", true }
	grpcCall := func(s *sweep.Spec) { s.Protocol, s.Endpoint, s.Call = "grpc", "", "echo.Echo/Say" }
	open := func(s *sweep.Spec) { s.Rates = sweep.Rates{100} }

	type edit func(*sweep.Spec)
	seen := map[string]bool{} // the keys decided here
	for _, tc := range []struct {
		key    string
		before edit   // applied to both sides; nil: none
		set    edit   // the key given
		refuse string // the refusal's start; "": carried
	}{
		{key: "paths", set: func(s *sweep.Spec) {
			s.Paths = append(s.Paths, sweep.Path{Name: "direct", URL: "http://target:8081", Baseline: true})
		}},
		{key: "target", set: func(s *sweep.Spec) { s.Target = &sweep.Watch{Process: "httpbin"} }, refuse: "target: watches local processes"},
		{key: "ladder", set: func(s *sweep.Spec) { s.Ladder = sweep.Ladder{{Connections: 8, Threads: 2}} }},
		{key: "payloads", set: func(s *sweep.Spec) { s.Payloads = sweep.Payloads{2048} }},
		{key: "protocol", set: func(s *sweep.Spec) { s.Protocol = "h2c" }},
		{key: "endpoint", set: func(s *sweep.Spec) { s.Endpoint = "/anything/{size}" }},
		{key: "duration", set: func(s *sweep.Spec) { s.Duration = sweep.Duration(time.Minute) }},
		{key: "warmup", set: func(s *sweep.Spec) { s.Warmup = sweep.Duration(time.Second) }},
		{key: "timeout", set: func(s *sweep.Spec) { s.Timeout = sweep.Duration(time.Second) }},
		{key: "repeats", set: func(s *sweep.Spec) { s.Repeats = 2 }},
		{key: "rate", set: open},
		{key: "arrival", before: open, set: func(s *sweep.Spec) { s.Arrival = "poisson" }},
		{key: "jitter_pct", before: open, set: func(s *sweep.Spec) { s.JitterPct = 10 }},
		{key: "trim_start", set: func(s *sweep.Spec) { s.TrimStart = new(sweep.Duration) }, refuse: "trim_start and trim_end are the local sweep's"},
		{key: "trim_end", set: func(s *sweep.Spec) { s.TrimEnd = new(sweep.Duration) }, refuse: "trim_start and trim_end are the local sweep's"},
		{key: "call", before: func(s *sweep.Spec) { s.Protocol, s.Endpoint = "grpc", "" }, set: func(s *sweep.Spec) { s.Call = "echo.Echo/Say" }},
		{key: "data", before: grpcCall, set: func(s *sweep.Spec) { s.Data = `{"msg":"hi"}` }},
		{key: "protoset", before: grpcCall, set: func(s *sweep.Spec) { s.Protoset = "echo.pb" }, refuse: "protoset: a file on this machine"},
		{key: "messages", before: func(s *sweep.Spec) { s.Protocol, s.Endpoint = "grpc-server-stream", "" }, set: func(s *sweep.Spec) { s.Messages = 50 }},
		{key: "window", before: func(s *sweep.Spec) { s.Protocol, s.Endpoint = "grpc-stream", "" }, set: func(s *sweep.Spec) { s.Window = 8 }},
		{key: "proto", before: grpcCall, set: func(s *sweep.Spec) { s.Proto = []string{"echo.proto"} }, refuse: "proto and import_paths: files on this machine"},
		{key: "import_paths", before: grpcCall, set: func(s *sweep.Spec) { s.ImportPaths = []string{"protos"} }, refuse: "proto and import_paths: files on this machine"},
		{key: "feed", set: func(s *sweep.Spec) { s.Feed = "users.csv" }, refuse: "feed users.csv: a file on this machine"},
		{key: "hops", set: func(s *sweep.Spec) { s.Hops = 3 }},

		{key: "path name", set: func(s *sweep.Spec) { mesh(s).Name = "istio" }},
		{key: "path url", set: func(s *sweep.Spec) { mesh(s).URL = "http://target:8081" }},
		{key: "path baseline", set: func(s *sweep.Spec) { mesh(s).Baseline = true }},
		{key: "path watch", set: func(s *sweep.Spec) { mesh(s).Watch = &sweep.Watch{Process: "envoy"} }, refuse: "path mesh: watch selects local processes"},
		{key: "path new_conn", set: func(s *sweep.Spec) { mesh(s).NewConn = true }},
		{key: "path cacert", before: tlsPath, set: func(s *sweep.Spec) { mesh(s).CACert = "ca.pem" }, refuse: "path mesh: cacert is a file on this machine"},
		{key: "path insecure", before: func(s *sweep.Spec) { mesh(s).URL = "https://target:8080" }, set: func(s *sweep.Spec) { mesh(s).Insecure = true }},
		{key: "path cert", before: tlsPath, set: func(s *sweep.Spec) { mesh(s).Cert, mesh(s).Key = crt, key }},
		{key: "path key", before: func(s *sweep.Spec) { tlsPath(s); mesh(s).Cert = crt }, set: func(s *sweep.Spec) { mesh(s).Key = key }},
		{key: "path workers", set: func(s *sweep.Spec) { mesh(s).Workers = 4 }, refuse: "path mesh: workers records a local proxy's worker processes"},
		{key: "path netns", set: func(s *sweep.Spec) { mesh(s).NetNS = "lab" }, refuse: "path mesh: netns is a namespace of this machine"},
		{key: "path sidecar", set: func(s *sweep.Spec) { mesh(s).Sidecar = &sweep.Sidecar{Proxy: "nginx", Placement: "both"} },
			refuse: "path mesh: sidecar runs proxies in pods of this machine"},
	} {
		seen[tc.key] = true
		t.Run(tc.key, func(t *testing.T) {
			without, with := keySpec(), keySpec()
			if tc.before != nil {
				tc.before(&without)
				tc.before(&with)
			}
			tc.set(&with)
			base, err := workersView(without)
			if err != nil {
				t.Fatalf("without %s: %v", tc.key, err)
			}
			got, err := workersView(with)
			switch {
			case tc.refuse != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.refuse)):
				t.Errorf("%s: %v, want it refused: %q…", tc.key, err, tc.refuse)
			case tc.refuse == "" && err != nil:
				t.Errorf("%s: %v, want it carried to the workers", tc.key, err)
			case tc.refuse == "" && got == base:
				t.Errorf("%s is dropped: the workers are given the same with it as without:\n%s", tc.key, got)
			}
		})
	}
	for _, k := range fileKeys(reflect.TypeFor[sweep.Spec](), "") {
		if !seen[k] {
			t.Errorf("sweep key %s: neither carried to the workers nor refused here; decide (FromSweep, Spec.CheckCluster) and add it", k)
		}
	}
	for _, k := range fileKeys(reflect.TypeFor[sweep.Path](), "path ") {
		if !seen[k] {
			t.Errorf("sweep key %s: neither carried to the workers nor refused here; decide (FromSweep, Spec.CheckCluster) and add it", k)
		}
	}
}

// keySpec is a one-path, one-step sweep as Parse leaves it.
func keySpec() sweep.Spec {
	return sweep.Spec{Paths: []sweep.Path{{Name: "mesh", URL: "http://target:8080"}}, Ladder: sweep.Ladder{{Connections: 4, Threads: 2}},
		Payloads: sweep.Payloads{100}, Rates: sweep.Rates{0}, Repeats: 1, Protocol: "http1", Endpoint: "/bytes/{size}",
		Duration: sweep.Duration(5 * time.Second)}
}

// workersView is what k8s run gives the workers of s and records of each
// step (ForCluster's plan through --mesh istio): the chain's length, the
// client certificates, and each step's record and `loadgen run` flags.
func workersView(s sweep.Spec) (string, error) {
	o := k8s.Options{Mesh: k8s.MeshIstio, Namespace: "b", Hops: 1}
	load, steps, err := ForCluster(&s, &o, false)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "hops %d, certificates %+v\n", o.Hops, load.ClientCerts)
	for _, st := range steps {
		args, err := o.RunArgs(load, st, k8s.Addresses{})
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "%+v: %s\n", st, strings.Join(args, " "))
	}
	return b.String(), nil
}

// fileKeys are the YAML keys of a sweep file's object t, prefixed.
func fileKeys(t reflect.Type, prefix string) []string {
	var keys []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name != "" && name != "-" && f.IsExported() {
			keys = append(keys, prefix+name)
		}
	}
	return keys
}
