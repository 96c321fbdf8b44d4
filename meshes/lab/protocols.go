package lab

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Protocols are what a lab measures its paths with (loadgen lab's
// --protocols; DefaultProtocols by default). grpc-stream (gRPC ping-pong, the VPC CNI study's) serves a gRPC target
// on the paths' ports instead, so it runs alone; udp-rr and udp-stream are
// served on the same port numbers beside the TCP target.
var Protocols = []string{"tcp-rr", "tcp-crr", "tcp-stream", "grpc-stream", "udp-rr", "udp-stream"}

// A lab's defaults, loadgen lab's flags': netperf's TCP tests
// (DefaultProtocols) with netperf's one connection, at DefaultSize
// requests and responses and DefaultStreamSize stream writes, in short
// steps (a lab measures many paths, in every mode).
var DefaultProtocols = []string{"tcp-rr", "tcp-crr", "tcp-stream"}

const (
	DefaultSize       = "1KiB"  // --size: tcp-rr's, tcp-crr's (and UDP's) messages
	DefaultStreamSize = "64KiB" // --stream-size: tcp-stream's writes
	DefaultLadder     = "c1t1"  // netperf runs one connection
	DefaultDuration   = 3 * time.Second
	DefaultWarmup     = 500 * time.Millisecond
)

// ParseProtocols reads a comma-separated list of Protocols: one or more,
// and grpc-stream alone, since its gRPC target takes the tcp target's port.
// Its errors name loadgen lab's flag.
func ParseProtocols(s string) ([]string, error) {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	for _, p := range out {
		if !slices.Contains(Protocols, p) {
			return nil, fmt.Errorf("--protocols: %q is not one of %s", p, strings.Join(Protocols, ", "))
		}
	}
	if len(out) == 0 {
		return nil, errors.New("--protocols is empty: give one or more of " + strings.Join(Protocols, ", "))
	}
	if slices.Contains(out, "grpc-stream") && len(out) > 1 {
		return nil, errors.New("--protocols: grpc-stream runs alone (its gRPC target takes the tcp target's port): run the lab once for it")
	}
	return out, nil
}

// Targets are the loadgen serve targets the protocols need in the server
// pods (tcp, grpc, udp: a protocol's name up to its dash), each once, in
// the protocols' order.
func Targets(protocols []string) []string {
	var out []string
	for _, proto := range protocols {
		t, _, _ := strings.Cut(proto, "-")
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// Payload is a protocol's payload in a lab's sweep: tcp-stream's is its
// write size (--stream-size), every other's its message size (--size).
func Payload(protocol string, size, streamSize int) int {
	if protocol == "tcp-stream" {
		return streamSize
	}
	return size
}
