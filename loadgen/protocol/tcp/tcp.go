// Package tcp is loadgen's raw TCP protocol, netperf-style:
//
//   - tcp-rr (TCP_RR): on a kept connection, each request writes Size bytes
//     and reads Size bytes back from an echo server. Transactions/s and
//     request/response latency.
//   - tcp-crr (TCP_CRR): each request connects, writes Size bytes, reads Size
//     bytes back and closes. The latency is that of the whole thing.
//   - tcp-stream (TCP_STREAM): a connection opened as a sink (SinkMagic) to
//     which each request writes one chunk of Size bytes (netperf's send size,
//     -m) and reads nothing. The engine turns Outcome.Written into Gbit/s.
//
// The target is loadgen/targets/tcpecho; any echo server serves tcp-rr and
// tcp-crr, and any server that reads and discards serves tcp-stream.
package tcp

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
)

// Mode is the kind of measurement.
type Mode string

const (
	RR  Mode = "tcp-rr"  // request/response on a kept connection
	CRR Mode = "tcp-crr" // connect, request/response, close
	// Stream is one direction, client to server. Its sockets keep Nagle's
	// algorithm (TCP_NODELAY off) where every other protocol turns it
	// off: netperf's TCP_STREAM sets TCP_NODELAY only when asked (-D), as
	// iperf3 does (-N), so small writes coalesce into full segments and a
	// stream measures bulk throughput. With TCP_NODELAY each 1 KiB write
	// is a segment: on loopback (2026-12-07) a C sender's 1 KiB writes
	// carried 0.71–0.92 Gbit/s with it and 3.4–3.7 without.
	Stream Mode = "tcp-stream"
)

const (
	// DefaultSize is netperf's and the CNI report's message size; front ends
	// use it as the default of Config.Size.
	DefaultSize = 1024
	// MaxSize bounds Config.Size.
	MaxSize = 64 << 20
	// DefaultDialTimeout bounds a connect when Config.DialTimeout is 0.
	DefaultDialTimeout = 5 * time.Second
	// SinkMagic is what a tcp-stream connection sends first so that the
	// target discards what follows instead of echoing it. It equals
	// tcpecho.SinkMagic (a test checks); this package imports only proto.
	SinkMagic = "LOADGEN-SINK/1\r\n"
)

// ParseMode accepts a mode as loadgen spells it ("tcp-rr"), without the
// prefix ("rr") or as netperf does ("TCP_RR").
func ParseMode(s string) (Mode, error) {
	m := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), "_", "-"))
	if !strings.HasPrefix(m, "tcp-") {
		m = "tcp-" + m
	}
	switch Mode(m) {
	case RR, CRR, Stream:
		return Mode(m), nil
	}
	return "", fmt.Errorf("unknown TCP mode %q: use tcp-rr, tcp-crr or tcp-stream", s)
}

// Config configures a Dialer.
type Config struct {
	Addr        string        // the target, host:port
	Mode        Mode          // RR, CRR or Stream
	Size        int           // bytes per request (and per response for RR and CRR), 1 to MaxSize
	DialTimeout time.Duration // bound on one connect; 0 means DefaultDialTimeout
	// Enter, when set, runs every connect (tcp-crr's, in Do, included), so
	// that the socket is made where Enter says: netns.NS.Do puts it in a
	// network namespace.
	Enter func(connect func() error) error
}

// Validate reports the first thing wrong with c, in one line.
func (c Config) Validate() error {
	switch c.Mode {
	case RR, CRR, Stream:
	case "":
		return errors.New("tcp: no mode: use tcp-rr, tcp-crr or tcp-stream")
	default:
		return fmt.Errorf("tcp: unknown mode %q: use tcp-rr, tcp-crr or tcp-stream", c.Mode)
	}
	if c.Size < 1 || c.Size > MaxSize {
		return fmt.Errorf("tcp: size %d bytes out of range: use 1 to %d (64 MiB); netperf's default is %d", c.Size, MaxSize, DefaultSize)
	}
	if c.DialTimeout < 0 {
		return fmt.Errorf("tcp: negative dial timeout %v", c.DialTimeout)
	}
	return checkAddr(c.Addr)
}

func checkAddr(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("tcp: address %q: want host:port, e.g. 127.0.0.1:7000 or [::1]:7000", addr)
	}
	if host == "" {
		return fmt.Errorf("tcp: address %q has no host", addr)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("tcp: address %q: port must be a number from 1 to 65535", addr)
	}
	return nil
}
