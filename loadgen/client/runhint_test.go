package client

import (
	"errors"
	"fmt"
	"testing"

	"loadgen/loadgen/protocol"
)

// runHint: the certificate hint first, none when the error advises one;
// the protocol hint only for a run that ended, from here, with no mix.
func TestRunHint(t *testing.T) {
	advised := fmt.Errorf("handshake: %w", protocol.ErrClientCertAdvised)
	other := errors.New("connect: refused")
	for _, tc := range []struct {
		name        string
		f           Failure
		cert, proto string
		want        string
		asked       string // which hints were asked, in order
	}{
		{"the certificate hint first", Failure{}, "cert", "proto", "cert", "c"},
		{"else the protocol's", Failure{}, "", "proto", "proto", "cp"},
		{"neither", Failure{}, "", "", "", "cp"},
		{"no protocol hint with --netns", Failure{NetNS: "ns1"}, "", "proto", "", "c"},
		{"the certificate hint with --netns", Failure{NetNS: "ns1"}, "cert", "proto", "cert", "c"},
		{"no protocol hint with --targets", Failure{Mix: true}, "", "proto", "", "c"},
		{"the certificate hint with --targets", Failure{Mix: true}, "cert", "proto", "cert", "c"},
		{"an error: the certificate hint", Failure{Err: other}, "cert", "proto", "cert", "c"},
		{"an error: no protocol hint", Failure{Err: other}, "", "proto", "", "c"},
		{"an error that advises a certificate", Failure{Err: advised}, "cert", "proto", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := ""
			got := runHint(tc.f,
				func() string { asked += "c"; return tc.cert },
				func() string { asked += "p"; return tc.proto })
			if got != tc.want || asked != tc.asked {
				t.Errorf("runHint() = %q (asked %q), want %q (asked %q)", got, asked, tc.want, tc.asked)
			}
		})
	}
}
