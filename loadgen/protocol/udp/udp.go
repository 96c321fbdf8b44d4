// Package udp is loadgen's UDP protocol, netperf-style:
//
//   - udp-rr (UDP_RR): on a connected UDP socket, each request sends one
//     datagram of Size bytes and waits for one back from an echo, one in
//     flight. A request whose answer does not come before its deadline is
//     a timeout, and a lost datagram.
//   - udp-stream (UDP_STREAM): a connected UDP socket opened as a sink
//     (the control exchange below), to which each request sends one
//     datagram of Size bytes and waits for nothing. When the connection
//     closes, it asks the sink how many datagrams and bytes it received,
//     so that the loss is the receiver's count, not a guess.
//
// The target is loadgen/targets/udpecho; any UDP echo serves udp-rr.
package udp

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
	RR     Mode = "udp-rr"     // one datagram there, one back
	Stream Mode = "udp-stream" // datagrams one way, counted by the sink
)

const (
	// DefaultSize is netperf's UDP_RR request size and what front ends
	// use as the default of Config.Size.
	DefaultSize = 1024
	// MaxSize is the largest UDP payload over IPv4 (65535 less the IP and
	// UDP headers).
	MaxSize = 65507
	// DefaultDialTimeout bounds a connect (the sink's opening) when
	// Config.DialTimeout is 0.
	DefaultDialTimeout = 5 * time.Second
)

// The sink's control exchange; it equals targets/udpecho's (a test
// checks): this package imports only protocol.
const (
	control      = "LOADGEN-UDP/1 "
	controlOpen  = "open"
	controlOK    = "ok"
	controlCount = "count"
	controlClose = "close"
	controlPing  = "ping"
)

// Config configures a Dialer.
type Config struct {
	Addr        string        // the target, host:port
	Mode        Mode          // RR or Stream
	Size        int           // bytes per datagram, 1 to MaxSize
	DialTimeout time.Duration // bound on opening a sink and on asking its count; 0 means DefaultDialTimeout
	// Enter, when set, runs every socket's creation, so that it is made
	// where Enter says: netns.NS.Do puts it in a network namespace.
	Enter func(open func() error) error
}

// Validate reports the first thing wrong with c, in one line.
func (c Config) Validate() error {
	switch c.Mode {
	case RR, Stream:
	case "":
		return errors.New("udp: no mode: use udp-rr or udp-stream")
	default:
		return fmt.Errorf("udp: unknown mode %q: use udp-rr or udp-stream", c.Mode)
	}
	if c.Size < 1 || c.Size > MaxSize {
		return fmt.Errorf("udp: size %d bytes out of range: a datagram carries 1 to %d bytes", c.Size, MaxSize)
	}
	if c.DialTimeout < 0 {
		return fmt.Errorf("udp: negative dial timeout %v", c.DialTimeout)
	}
	host, port, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return fmt.Errorf("udp: address %q: want host:port, e.g. 127.0.0.1:7001 or [::1]:7001", c.Addr)
	}
	if host == "" {
		return fmt.Errorf("udp: address %q has no host", c.Addr)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("udp: address %q: port must be a number from 1 to 65535", c.Addr)
	}
	return nil
}

// parseCount reads a sink's answer to count (after control).
func parseCount(msg string) (datagrams, bytes int64, err error) {
	f := strings.Fields(msg)
	if len(f) != 3 || f[0] != controlCount {
		return 0, 0, fmt.Errorf("udp: not a count: %q", msg)
	}
	if datagrams, err = strconv.ParseInt(f[1], 10, 64); err == nil {
		bytes, err = strconv.ParseInt(f[2], 10, 64)
	}
	return datagrams, bytes, err
}
