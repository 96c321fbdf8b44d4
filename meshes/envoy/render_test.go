package envoy

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"loadgen/meshes/proxytest"
)

var update = flag.Bool("update", false, "rewrite testdata/* from Render")

func pod(l Layout) Config {
	return Pod(l, netip.MustParseAddr("198.18.0.2"), proxytest.Pod())
}

func renderCases() []struct {
	name string
	cfg  Config
} {
	istioMTLS := pod(Istio)
	istioMTLS.Sidecar.MTLS = proxytest.GoldenMTLS()
	appMeshMTLS := pod(AppMesh)
	appMeshMTLS.Sidecar.MTLS = proxytest.GoldenMTLS()
	return []struct {
		name string
		cfg  Config
	}{
		{"istio", pod(Istio)},
		{"istio-mtls", istioMTLS},
		{"appmesh", pod(AppMesh)},
		{"appmesh-mtls", appMeshMTLS},
	}
}

// TestRenderGolden checks every layout's bootstrap, as YAML and as JSON,
// against its golden file.
func TestRenderGolden(t *testing.T) {
	for _, tc := range renderCases() {
		for _, f := range []Format{YAML, JSON} {
			t.Run(tc.name+"."+string(f), func(t *testing.T) {
				got, err := tc.cfg.Render(f)
				if err != nil {
					t.Fatal(err)
				}
				proxytest.Golden(t, filepath.Join("testdata", tc.name+"."+string(f)), got, *update)
			})
		}
	}
}

// TestRenderRoundTrip checks that the YAML and the JSON both read back,
// strictly (no unknown field), into the bootstrap Bootstrap built, which
// passes Check: what Envoy would load is what was validated.
func TestRenderRoundTrip(t *testing.T) {
	for _, tc := range renderCases() {
		t.Run(tc.name, func(t *testing.T) {
			want, err := tc.cfg.Bootstrap()
			if err != nil {
				t.Fatal(err)
			}
			js, _ := tc.cfg.Render(JSON)
			ym, _ := tc.cfg.Render(YAML)
			var doc any
			if err := yaml.Unmarshal(ym, &doc); err != nil {
				t.Fatal(err)
			}
			fromYAML, err := jsonOf(doc)
			if err != nil {
				t.Fatal(err)
			}
			for name, b := range map[string][]byte{"json": js, "yaml": fromYAML} {
				got := &bootstrapv3.Bootstrap{}
				if err := (protojson.UnmarshalOptions{}).Unmarshal(b, got); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !proto.Equal(got, want) {
					t.Errorf("%s does not read back into the bootstrap", name)
				}
				if err := Check(got); err != nil {
					t.Errorf("%s: %v", name, err)
				}
			}
		})
	}
}

// TestLayouts checks what each mesh's sidecar is known by.
func TestLayouts(t *testing.T) {
	istio, _ := pod(Istio).Render(YAML)
	for _, want := range []string{"name: virtualOutbound", "port_value: 15001", "name: virtualInbound", "port_value: 15006",
		"name: prometheus_stats", "port_value: 15090", "admin:\n  address:\n    socket_address:\n      address: 127.0.0.1\n      port_value: 15000",
		"address: 127.0.0.6", "envoy.filters.listener.original_dst", "inbound|8080||"} {
		if !strings.Contains(string(istio), want) {
			t.Errorf("istio bootstrap lacks %q", want)
		}
	}
	appmesh, _ := pod(AppMesh).Render(YAML)
	for _, want := range []string{"name: lds_ingress_0.0.0.0:15000", "name: lds_egress_0.0.0.0:15001", "port_value: 9901"} {
		if !strings.Contains(string(appmesh), want) {
			t.Errorf("appmesh bootstrap lacks %q", want)
		}
	}
	if strings.Contains(string(appmesh), "15090") {
		t.Error("appmesh bootstrap has Istio's stats listener")
	}
	// Istio's circuit breakers are at the maximum on every cluster (Envoy's
	// defaults would answer 503 above 1024 connections or requests); App
	// Mesh keeps Envoy's.
	ib, err := pod(Istio).Bootstrap()
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range ib.StaticResources.Clusters {
		if cl.Name == "prometheus_stats" { // the bootstrap's own, to the admin
			continue
		}
		th := cl.GetCircuitBreakers().GetThresholds()
		if len(th) != 1 || th[0].GetMaxConnections().GetValue() != math.MaxUint32 || th[0].GetMaxPendingRequests().GetValue() != math.MaxUint32 ||
			th[0].GetMaxRequests().GetValue() != math.MaxUint32 || th[0].GetMaxRetries().GetValue() != math.MaxUint32 {
			t.Errorf("istio cluster %s: circuit breakers %v, want Istio's (all at %d)", cl.Name, th, uint32(math.MaxUint32))
		}
	}
	ab, err := pod(AppMesh).Bootstrap()
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range ab.StaticResources.Clusters {
		if cl.CircuitBreakers != nil {
			t.Errorf("appmesh cluster %s has circuit breakers", cl.Name)
		}
		if !strings.Contains(cl.Name, "ingress") {
			continue
		}
		// App Mesh's Envoy reaches the app on 127.0.0.1, not the pod's IP.
		a := cl.LoadAssignment.Endpoints[0].LbEndpoints[0].GetEndpoint().Address.GetSocketAddress()
		if a.Address != "127.0.0.1" || cl.UpstreamBindConfig != nil {
			t.Errorf("appmesh local app cluster %s: to %s, bound %v; want 127.0.0.1, unbound", cl.Name, a.Address, cl.UpstreamBindConfig)
		}
	}
}

// TestMTLSContexts checks that the server side requires client certificates
// of the trust domain and forwards their details; the client side requires
// the server's SPIFFE ID.
func TestMTLSContexts(t *testing.T) {
	cfg := pod(Istio)
	cfg.Sidecar.MTLS = proxytest.GoldenMTLS()
	b, err := cfg.Bootstrap()
	if err != nil {
		t.Fatal(err)
	}
	var inbound *tlsv3.DownstreamTlsContext
	var mgr *hcmv3.HttpConnectionManager
	for _, l := range b.StaticResources.Listeners {
		if l.Name != "virtualInbound" {
			continue
		}
		ch := l.FilterChains[0]
		inbound = &tlsv3.DownstreamTlsContext{}
		if err := ch.TransportSocket.GetTypedConfig().UnmarshalTo(inbound); err != nil {
			t.Fatal(err)
		}
		mgr = &hcmv3.HttpConnectionManager{}
		if err := ch.Filters[0].GetTypedConfig().UnmarshalTo(mgr); err != nil {
			t.Fatal(err)
		}
	}
	if inbound == nil || !inbound.RequireClientCertificate.GetValue() {
		t.Fatal("virtualInbound does not require a client certificate")
	}
	if mgr.ForwardClientCertDetails != hcmv3.HttpConnectionManager_SANITIZE_SET || !mgr.SetCurrentClientCertDetails.GetUri() {
		t.Error("virtualInbound does not forward the client's certificate details")
	}
	up := &tlsv3.UpstreamTlsContext{}
	for _, c := range b.StaticResources.Clusters {
		if strings.HasPrefix(c.Name, "outbound|") {
			if err := c.TransportSocket.GetTypedConfig().UnmarshalTo(up); err != nil {
				t.Fatal(err)
			}
		}
	}
	sans := up.GetCommonTlsContext().GetValidationContext().GetMatchTypedSubjectAltNames()
	if len(sans) != 1 || sans[0].SanType != tlsv3.SubjectAltNameMatcher_URI || sans[0].Matcher.GetExact() != "spiffe://cluster.local/ns/default/sa/httpbin" {
		t.Errorf("upstream SAN matchers %v, want the server's SPIFFE ID", sans)
	}
}

// TestCheckFindsErrorsInsideAny checks that a bad value packed in a
// typed_config is caught, where ValidateAll on the bootstrap alone would not
// see it.
func TestCheckFindsErrorsInsideAny(t *testing.T) {
	b, err := pod(Istio).Bootstrap()
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ValidateAll(); err != nil {
		t.Fatal(err)
	}
	l := b.StaticResources.Listeners[0]
	mgr := &hcmv3.HttpConnectionManager{}
	if err := l.FilterChains[0].Filters[0].GetTypedConfig().UnmarshalTo(mgr); err != nil {
		t.Fatal(err)
	}
	mgr.StatPrefix = "" // required: min_len 1
	if err := l.FilterChains[0].Filters[0].GetTypedConfig().MarshalFrom(mgr); err != nil {
		t.Fatal(err)
	}
	if err := b.ValidateAll(); err != nil {
		t.Fatalf("ValidateAll saw into the Any: %v (this test proves nothing)", err)
	}
	err = Check(b)
	if err == nil || !strings.Contains(err.Error(), "StatPrefix") {
		t.Errorf("Check = %v, want the empty stat prefix named", err)
	}
}

func TestValidateRejects(t *testing.T) {
	for name, mut := range map[string]func(*Config){
		"layout":       func(c *Config) { c.Layout = "linkerd" },
		"stats":        func(c *Config) { c.Stats = netip.AddrPort{} },
		"node":         func(c *Config) { c.NodeID = "" },
		"bad sidecar":  func(c *Config) { c.Sidecar.Outbound = c.Sidecar.Inbound },
		"appmesh stat": func(c *Config) { c.Layout = AppMesh },
	} {
		c := pod(Istio)
		mut(&c)
		if _, err := c.Render(YAML); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func jsonOf(doc any) ([]byte, error) {
	var b bytes.Buffer
	err := json.NewEncoder(&b).Encode(doc)
	return b.Bytes(), err
}
