package proxytest

import (
	"bytes"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"loadgen/meshes/layout"
	"loadgen/meshes/mtls"
)

// Golden compares got with the file at path, after rewriting the file
// when update is set (the -update flag of the profile's tests).
func Golden(t *testing.T, path string, got []byte, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("rendered config differs from %s (run with -update if intended):\n%s", path, got)
	}
}

// Pod is the sidecar layout of the golden files: the client pod
// 198.18.0.2 whose app listens on 8080, its upstream the server pod
// 198.18.0.3:8080.
func Pod() layout.Sidecar {
	return layout.Pod(netip.MustParseAddr("198.18.0.2"), 8080, netip.MustParseAddrPort("198.18.0.3:8080"))
}

// Named is Pod with the upstream by name, as in a cluster (a Service's;
// localhost here, so that a proxy's own check resolves it).
func Named() layout.Sidecar {
	s := Pod()
	s.UpstreamName = "localhost:8081"
	return s
}

// GoldenMTLS is the mTLS files of the golden files (paths only).
func GoldenMTLS() *layout.MTLS {
	return &layout.MTLS{CA: "/etc/loadgen/mtls/root-cert.pem", Cert: "/etc/loadgen/mtls/default.loadgen.crt",
		Key: "/etc/loadgen/mtls/default.loadgen.key", PeerID: "spiffe://cluster.local/ns/default/sa/httpbin",
		PeerName: "httpbin.default.svc.cluster.local"}
}

// IssueMTLS makes a CA in dir and the files of the client workload
// (default/loadgen) talking to the server (default/httpbin), for checking
// a rendered mTLS config with the proxy's own validator.
func IssueMTLS(t *testing.T, dir string) *layout.MTLS {
	t.Helper()
	ca, err := mtls.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	files, _, err := ca.Issue(mtls.DefaultPair())
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// NeedBinary returns the proxy's path from available, or skips the test
// (fails it when CI is set: .ci/run installs every proxy but Envoy).
func NeedBinary(t *testing.T, available func() (string, error)) string {
	t.Helper()
	bin, err := available()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v (.ci/run must install it)", err)
		}
		t.Skip(err)
	}
	return bin
}

// Case is one named config of a golden test.
type Case[C any] struct {
	Name string
	Cfg  C
}

// GoldenCases renders each case's config and compares it with
// testdata/NAME+ext, one subtest each.
func GoldenCases[C any](t *testing.T, cases []Case[C], ext string, render func(C) ([]byte, error), update bool) {
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			got, err := render(tc.Cfg)
			if err != nil {
				t.Fatal(err)
			}
			Golden(t, filepath.Join("testdata", tc.Name+ext), got, update)
		})
	}
}
