package protocol

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// HostDialer is a Dialer of a request mix whose requests go to several
// hosts (origins: scheme, host and port), a Dialer for each: a
// connection opened with Host(h) sends host h's requests only, picked by
// their index among that host's (a Picker's Pick(i) is the i-th request
// of its host). Dial dials host 0.
type HostDialer interface {
	Dialer
	// Hosts is how many hosts there are; Host(h) dials host h, and
	// Origin(h) names it (scheme://host:port).
	Hosts() int
	Host(h int) Dialer
	Origin(h int) string
}

// CheckHostConns is the rule of a load on several hosts (a HostDialer's,
// a request mix's): a connection or more each. Its error has no subject
// (it reads "goes to N hosts, …"): the caller names the mix.
func CheckHostConns(hosts, conns int) error {
	if hosts > conns {
		return fmt.Errorf("goes to %d hosts, a connection or more each: give at least -c %d", hosts, hosts)
	}
	return nil
}

// NewHosts makes the HostDialer of dialers, one per origin. Resolve
// looks each host's name up, in order; Close closes each; Opened sums
// their ConnCounters' when they count.
func NewHosts(origins []string, dialers []Dialer) (HostDialer, error) {
	switch {
	case len(dialers) == 0 || len(origins) != len(dialers):
		return nil, fmt.Errorf("%d hosts with %d dialers", len(origins), len(dialers))
	}
	h := &hosts{origins: origins, dialers: dialers}
	for _, d := range dialers {
		if _, ok := d.(ConnCounter); !ok {
			return h, nil
		}
	}
	return countingHosts{h}, nil
}

type hosts struct {
	origins []string
	dialers []Dialer
}

func (h *hosts) Dial(ctx context.Context) (Conn, error) { return h.dialers[0].Dial(ctx) }
func (h *hosts) Hosts() int                             { return len(h.dialers) }
func (h *hosts) Host(i int) Dialer                      { return h.dialers[i] }
func (h *hosts) Origin(i int) string                    { return h.origins[i] }

// Resolve looks up every host's name: the first that fails is the
// error, named.
func (h *hosts) Resolve(ctx context.Context) error {
	for i, d := range h.dialers {
		if r, ok := d.(Resolver); ok {
			if err := r.Resolve(ctx); err != nil {
				return fmt.Errorf("%s: %w", h.origins[i], err)
			}
		}
	}
	return nil
}

// Close closes each host's Dialer that holds something open.
func (h *hosts) Close() error {
	var errs []error
	for _, d := range h.dialers {
		if c, ok := d.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

// StreamsMessages is the hosts' (one protocol for all).
func (h *hosts) StreamsMessages() bool {
	md, ok := h.dialers[0].(MessageDialer)
	return ok && md.StreamsMessages()
}

type countingHosts struct{ *hosts }

// Opened sums the connections each host's Dialer opened.
func (h countingHosts) Opened() int64 {
	n := int64(0)
	for _, d := range h.dialers {
		n += d.(ConnCounter).Opened()
	}
	return n
}
