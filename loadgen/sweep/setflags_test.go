package sweep

import (
	"reflect"
	"testing"
)

// TestSetProtocolAndCall: a protocol given over a read spec drops the
// HTTP default endpoint (never one the file chose), and a method given over
// it drops the payloads, its message being the call's data.
func TestSetProtocolAndCall(t *testing.T) {
	for _, tc := range []struct {
		name         string
		spec         Spec
		protocol     string // "" leaves it
		call         *string
		wantEndpoint string
		wantPayloads Payloads
	}{
		{"http default to tcp", Spec{Protocol: "http1", Endpoint: DefaultEndpoint, Payloads: Payloads{64}}, "tcp", nil, "", Payloads{64}},
		{"http default to h2c", Spec{Protocol: "http1", Endpoint: DefaultEndpoint, Payloads: Payloads{64}}, "h2c", nil, DefaultEndpoint, Payloads{64}},
		{"file's endpoint kept", Spec{Protocol: "http1", Endpoint: "/echo/{size}", Payloads: Payloads{64}}, "h2c", nil, "/echo/{size}", Payloads{64}},
		{"call clears payloads", Spec{Protocol: "grpc", Payloads: Payloads{64, 1024}}, "", ptr("loadgen.echo.v1.Echo/Unary"), "", Payloads{0}},
		{"empty call keeps payloads", Spec{Protocol: "grpc", Payloads: Payloads{64, 1024}}, "", ptr(""), "", Payloads{64, 1024}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.spec
			s.Paths = []Path{{Name: "baseline", URL: "127.0.0.1:1"}}
			ladder, err := ParseLadder("c1t1")
			if err != nil {
				t.Fatal(err)
			}
			s.Ladder = ladder
			if tc.protocol != "" {
				s.SetProtocol(tc.protocol)
			}
			if tc.call != nil {
				s.SetCall(*tc.call)
			}
			if err := s.Complete(); err != nil {
				t.Fatalf("Complete: %v", err)
			}
			if s.Endpoint != tc.wantEndpoint || !reflect.DeepEqual(s.Payloads, tc.wantPayloads) {
				t.Errorf("endpoint %q payloads %v, want %q %v", s.Endpoint, s.Payloads, tc.wantEndpoint, tc.wantPayloads)
			}
		})
	}
}

func ptr(s string) *string { return &s }
