package main

import (
	"errors"

	"loadgen/loadgen"
	"loadgen/loadgen/client"
	"loadgen/loadgen/protocol"
)

// newDialer builds the run's Dialer from its flags (loadgen/client does
// the work) and records what it implies in cfg.
func newDialer(f *runFlags, cfg *loadgen.Config, body []byte) (protocol.Dialer, error) {
	tlsOpt, err := f.tls.options()
	if err != nil {
		return nil, err
	}
	s := client.Spec{
		Protocol: f.protocol, Target: cfg.Target, Method: f.method, Headers: cfg.Headers, Body: body,
		Size: cfg.Size, Streams: cfg.Streams, Connections: cfg.Connections, Timeout: cfg.Timeout.D(),
		TLS: tlsOpt, Client: f.client, NetNS: f.netns, Health: f.health,
		Call: f.call, Data: f.data, Protoset: f.protoset,
	}
	d, err := client.New(&s)
	if errors.Is(err, client.ErrUnreachable) {
		return nil, runFailure{err}
	}
	if err != nil {
		return nil, err
	}
	s.Record(&cfg.Config)
	return d, nil
}
