package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"

	"loadgen/loadgen"
	"loadgen/loadgen/client"
	"loadgen/loadgen/protocol"
)

// newDialer builds the run's Dialer from its flags through client.Build,
// as every sweep step's is (sweep.BuildStep), and records what it implies
// in cfg.
func newDialer(f *runFlags, cfg *loadgen.Config, body []byte) (protocol.Dialer, error) {
	tlsOpt, err := f.tls.options()
	if err != nil {
		return nil, err
	}
	s := client.Spec{
		Protocol: f.protocol, Method: f.method, Body: body,
		TLS: tlsOpt, Client: f.client, NetNS: f.netns, Health: f.health,
		Call: f.call, Data: f.data, Protoset: f.protoset, OKStatus: f.okStatus,
		Proto: f.proto, ImportPaths: f.importPaths, Messages: f.messages, Window: f.window,
		Feed:    f.feedRows,
		ZeroRTT: f.zeroRTT,
	}
	if m := f.mix; m != nil { // --targets
		for _, r := range m.Requests {
			s.Requests = append(s.Requests, client.Request{Method: r.Method, URL: r.URL, Headers: r.Headers, Body: r.Body})
		}
		cfg.Mix = &loadgen.Mix{Weights: m.Weights(), Names: m.Names()}
		if len(m.Origins) > 1 {
			cfg.Mix.Hosts = m.Hosts()
			if cfg.Connections < len(m.Origins) {
				return nil, fmt.Errorf("--targets %s goes to %d hosts, a connection or more each: give at least -c %d", f.targets, len(m.Origins), len(m.Origins))
			}
		}
	}
	d, err := client.Build(&s, &cfg.Config)
	if errors.Is(err, client.ErrUnreachable) {
		return nil, runFailure{err: err}
	}
	if err != nil {
		return nil, err
	}
	cfg.Config.Targets = f.targets
	return d, nil
}

// runTarget checks an HTTP target as typed, before its Dialer is built:
// host:port/path with a numeric port gets its http:// even when the port
// is out of range, so that the port is what the error names (not a URL
// parse error about a colon), and a URL without a host name
// (http://:8080/) is refused instead of dialed on this machine.
func runTarget(proto, target string) (string, error) {
	switch proto {
	case "", "http1", "h2", "h2c", "h3":
	default:
		return target, nil // host:port, checked by the protocol
	}
	if !strings.Contains(target, "://") {
		hp, _, _ := strings.Cut(target, "/")
		if _, port, err := net.SplitHostPort(hp); err == nil && port != "" && strings.Trim(port, "0123456789") == "" {
			target = "http://" + target
		}
	}
	if u, err := url.Parse(target); err == nil && u.Host != "" && u.Hostname() == "" {
		return "", fmt.Errorf("URL %q has no host name: give one, e.g. %s://127.0.0.1%s/", target, u.Scheme, u.Host)
	}
	return target, nil
}

// loopCannot is the usage error of --driver loop for a run the event loop
// cannot drive (loadgen.SpareP false), naming what it cannot drive.
func loopCannot(cfg loadgen.Config) error {
	return fmt.Errorf("--driver loop cannot drive %s: use --driver goroutines, or leave out --driver to take the loop where it can", loadgen.LoopCannot(cfg))
}

// closeDialer releases a Dialer that no run will take (Run closes the one
// it runs): a --netns Dialer holds its namespace open.
func closeDialer(d protocol.Dialer) {
	if c, ok := d.(io.Closer); ok {
		c.Close()
	}
}
