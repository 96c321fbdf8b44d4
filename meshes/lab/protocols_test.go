package lab

import (
	"slices"
	"strings"
	"testing"

	"loadgen/internal/units"
)

func TestParseProtocols(t *testing.T) {
	for _, c := range []struct {
		in      string
		want    []string
		targets []string
		err     string
	}{
		{"tcp-rr,tcp-crr,tcp-stream", []string{"tcp-rr", "tcp-crr", "tcp-stream"}, []string{"tcp"}, ""},
		{" udp-rr , tcp-rr,,udp-stream ", []string{"udp-rr", "tcp-rr", "udp-stream"}, []string{"udp", "tcp"}, ""},
		{"grpc-stream", []string{"grpc-stream"}, []string{"grpc"}, ""},
		{"grpc-stream,tcp-rr", nil, nil, "--protocols: grpc-stream runs alone"},
		{"tcp-rr,http", nil, nil, `--protocols: "http" is not one of tcp-rr, tcp-crr, tcp-stream, grpc-stream, udp-rr, udp-stream`},
		{"", nil, nil, "--protocols is empty: give one or more of tcp-rr"},
		{" , ", nil, nil, "--protocols is empty"},
	} {
		got, err := ParseProtocols(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseProtocols(%q) = %v, %v; want %q", c.in, got, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParseProtocols(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
		if tg := Targets(got); !slices.Equal(tg, c.targets) {
			t.Errorf("Targets(%v) = %v, want %v", got, tg, c.targets)
		}
	}
}

func TestPayload(t *testing.T) {
	for _, tc := range []struct {
		proto string
		want  int
	}{{"tcp-stream", 65536}, {"tcp-rr", 1}, {"tcp-crr", 1}, {"udp-stream", 1}, {"udp-rr", 1}, {"grpc-stream", 1}} {
		if got := Payload(tc.proto, 1, 65536); got != tc.want {
			t.Errorf("Payload(%s, 1, 65536) = %d, want %d", tc.proto, got, tc.want)
		}
	}
}

// The lab's defaults are netperf's three TCP tests, whatever the order of
// Protocols, at sizes the flags' grammar reads: 1 KiB messages, 64 KiB
// stream writes.
func TestDefaults(t *testing.T) {
	got, err := ParseProtocols(strings.Join(DefaultProtocols, ","))
	if err != nil || !slices.Equal(got, []string{"tcp-rr", "tcp-crr", "tcp-stream"}) {
		t.Errorf("DefaultProtocols: %v, %v", got, err)
	}
	for _, tc := range []struct {
		name, size string
		want       int
	}{{"DefaultSize", DefaultSize, 1024}, {"DefaultStreamSize", DefaultStreamSize, 65536}} {
		if n, err := units.ParseIntBytes(tc.size); err != nil || n != tc.want {
			t.Errorf("%s %q: %d, %v; want %d", tc.name, tc.size, n, err, tc.want)
		}
	}
	if DefaultLadder != "c1t1" || DefaultWarmup >= DefaultDuration {
		t.Errorf("ladder %s, warm-up %v of %v", DefaultLadder, DefaultWarmup, DefaultDuration)
	}
}
