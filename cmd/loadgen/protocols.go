package main

import (
	"fmt"
	"io"

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
		hosts, err := s.MixHosts(cfg.Connections)
		if err != nil {
			return nil, fmt.Errorf("--targets %s %w", f.targets, err)
		}
		cfg.Mix = &loadgen.Mix{Weights: m.Weights(), Names: m.Names(), Hosts: hosts}
	}
	d, err := client.Build(&s, &cfg.Config)
	if err != nil {
		return nil, err // client.BuildExit says what it comes to
	}
	cfg.Config.Targets = f.targets
	return d, nil
}

// closeDialer releases a Dialer that no run will take (Run closes the one
// it runs): a --netns Dialer holds its namespace open.
func closeDialer(d protocol.Dialer) {
	if c, ok := d.(io.Closer); ok {
		c.Close()
	}
}
