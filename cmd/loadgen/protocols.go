package main

import (
	"fmt"
	"sort"
	"strings"

	"loadgen/loadgen"
	"loadgen/loadgen/proto"
	"loadgen/loadgen/proto/http1"
)

// protocol builds a Dialer for one -p value from the run's flags.
type protocol func(f *runFlags, cfg *loadgen.Config, body []byte) (proto.Dialer, error)

var protocols = map[string]protocol{
	"http1": newHTTP1,
}

func protocolNames() []string {
	names := make([]string, 0, len(protocols))
	for n := range protocols {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func newDialer(f *runFlags, cfg *loadgen.Config, body []byte) (proto.Dialer, error) {
	name := f.protocol
	if name == "" {
		name = "http1"
	}
	p, ok := protocols[name]
	if !ok {
		return nil, fmt.Errorf("unknown protocol %q: use one of %s", name, strings.Join(protocolNames(), ", "))
	}
	cfg.Protocol = name
	cfg.BodyBytes = len(body)
	return p(f, cfg, body)
}

func newHTTP1(f *runFlags, cfg *loadgen.Config, body []byte) (proto.Dialer, error) {
	u, err := targetURL(cfg.Target)
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("unsupported scheme %q in %s: -p http1 takes http:// or https:// URLs", u.Scheme, cfg.Target)
	}
	if cfg.Streams > 1 {
		return nil, fmt.Errorf("HTTP/1.1 has one request in flight per connection: --streams needs -p h2 or h2c")
	}
	tlsOpt, err := f.tls.options(u.Scheme == "https")
	if err != nil {
		return nil, err
	}
	cfg.TLS = tlsOpt.Enabled
	method := f.method
	if method == "" {
		method = "GET"
		if len(body) > 0 {
			method = "POST"
		}
	}
	cfg.Method = strings.ToUpper(method)
	return http1.NewDialer(http1.Config{
		URL:         cfg.Target,
		Method:      cfg.Method,
		Headers:     cfg.Headers,
		Body:        body,
		TLS:         tlsOpt,
		DialTimeout: cfg.Timeout.D(),
	})
}
