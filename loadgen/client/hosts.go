package client

import (
	"fmt"
	"io"
	"net"
	"slices"
	"strings"

	"loadgen/loadgen/protocol"
)

// mixOrigins are the origins (scheme://host:port, the host in lower case,
// the port written) of a request mix's requests, in the order they first
// appear; nil without a mix.
func (s *Spec) mixOrigins() []string {
	var origins []string
	for _, r := range s.Requests {
		if o := origin(r.URL); !slices.Contains(origins, o) {
			origins = append(origins, o)
		}
	}
	return origins
}

// MixHosts is the host of each of a request mix's requests (Requests)
// as the HostDialer New builds for them numbers its hosts: its origin's
// index, in the order the origins first appear; the engine's Mix.Hosts.
// It is nil for a mix on one origin, which New builds no HostDialer for.
// A mix on several needs a connection or more per host: conns fewer is
// protocol.CheckHostConns's error, which the caller names the mix in.
func (s *Spec) MixHosts(conns int) ([]int, error) {
	origins := s.mixOrigins()
	if len(origins) < 2 {
		return nil, nil
	}
	if err := protocol.CheckHostConns(len(origins), conns); err != nil {
		return nil, err
	}
	hosts := make([]int, len(s.Requests))
	for i, r := range s.Requests {
		hosts[i] = slices.Index(origins, origin(r.URL))
	}
	return hosts, nil
}

// origin is rawURL's scheme://host:port, as mixOrigins writes it; rawURL
// may hold fields in its path and query.
func origin(rawURL string) string {
	scheme, rest, _ := strings.Cut(rawURL, "://")
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	host, port, err := net.SplitHostPort(rest)
	if err != nil {
		host, port = strings.Trim(rest, "[]"), map[string]string{"http": "80", "https": "443"}[strings.ToLower(scheme)]
	}
	return strings.ToLower(scheme) + "://" + net.JoinHostPort(strings.ToLower(host), port)
}

// newHosts builds a request mix on several origins: a Dialer per origin,
// each with that origin's requests in their order (a protocol.HostDialer).
// s then records the first host's Spec, with every origin as its Target,
// and TLS when a host's requests go over it.
func (s *Spec) newHosts(origins []string) (protocol.Dialer, error) {
	if s.Target != "" && !slices.Contains(origins, origin(WithScheme(s.Target))) {
		return nil, fmt.Errorf("the request mix (--targets) goes to %d hosts: leave out the URL %s", len(origins), s.Target)
	}
	dialers := make([]protocol.Dialer, len(origins))
	closeAll := func() {
		for _, d := range dialers {
			if c, ok := d.(io.Closer); ok {
				c.Close()
			}
		}
	}
	var first Spec
	for h, o := range origins {
		hs := *s
		hs.Target, hs.Requests = o, nil
		for _, r := range s.Requests {
			if origin(r.URL) == o {
				hs.Requests = append(hs.Requests, r)
			}
		}
		d, err := New(&hs)
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("host %s: %w", o, err)
		}
		dialers[h] = d
		if h == 0 {
			first = hs
		}
	}
	hd, err := protocol.NewHosts(origins, dialers)
	if err != nil {
		closeAll()
		return nil, err
	}
	requests := s.Requests
	*s = first
	s.Target, s.Requests = strings.Join(origins, " "), requests
	// TLS: some host's requests went over it.
	s.TLS.Enabled = slices.ContainsFunc(origins, func(o string) bool { return strings.HasPrefix(o, "https://") })
	return hd, nil
}
