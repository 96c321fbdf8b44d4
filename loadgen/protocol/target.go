package protocol

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"
)

// Target is a host:port that a Dialer's connections go to, its name looked
// up once: by Resolve before a run (as wrk and fortio resolve the host at
// their start), or at the first Socket. Every connection after goes to the
// address found, so no connect of a run waits on DNS, and a name whose
// lookups fail for a while (a pod's first seconds, a busy cluster DNS) is
// looked up until it answers instead of failing the run's first connect.
type Target struct {
	Addr string // host:port

	// resolver looks the name up; nil is net.DefaultResolver (tests set
	// one that asks their own DNS server).
	resolver *net.Resolver

	mu       sync.Mutex
	resolved bool
	ap       netip.AddrPort
}

// Resolver is a Dialer whose target's name can be looked up before a run.
type Resolver interface {
	// Resolve looks the target's name up until it answers or ctx ends;
	// connections opened after dial the address found.
	Resolve(ctx context.Context) error
}

// lookupRetry is how long Resolve waits before asking again after a
// lookup that failed for a while (a timeout, a server failure).
const lookupRetry = 200 * time.Millisecond

// socketLookupBound bounds the lookup of a Socket whose Target was not
// resolved before.
const socketLookupBound = 10 * time.Second

// Resolve looks the name of Addr up until it answers, a lookup says the
// name does not exist (or Addr is malformed), or ctx ends; once found, the
// address is kept. An IP address needs no lookup.
func (t *Target) Resolve(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.resolved {
		return nil
	}
	host, port, err := net.SplitHostPort(t.Addr)
	if err != nil {
		return fmt.Errorf("dial tcp %s: %w", t.Addr, err)
	}
	pn, err := net.DefaultResolver.LookupPort(ctx, "tcp", port)
	if err != nil {
		return fmt.Errorf("dial tcp %s: %w", t.Addr, err)
	}
	r := t.resolver
	if r == nil {
		r = net.DefaultResolver
	}
	var last error // the last lookup's failure before the bound
	for {
		ips, err := r.LookupNetIP(ctx, "ip", host)
		if err == nil && len(ips) == 0 {
			err = fmt.Errorf("lookup %s: no address", host)
		}
		if err == nil {
			t.ap, t.resolved = netip.AddrPortFrom(pick(ips).Unmap(), uint16(pn)), true
			return nil
		}
		if ctx.Err() != nil {
			// The bound came during a lookup, which then says only that
			// it was canceled: the failure is the one before, if any.
			if last == nil {
				last = err
			}
			return fmt.Errorf("dial tcp %s: %w (the name's lookups failed until the connect's bound)", t.Addr, last)
		}
		last = err
		var de *net.DNSError
		if !errors.As(err, &de) || de.IsNotFound || (!de.IsTimeout && !de.IsTemporary) {
			return fmt.Errorf("dial tcp %s: %w", t.Addr, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("dial tcp %s: %w (the name's lookups failed until the connect's bound)", t.Addr, err)
		case <-time.After(lookupRetry):
		}
	}
}

// pick takes the first IPv4 address, as Go's dialer tries IPv4 first when
// a name has both.
func pick(ips []netip.Addr) netip.Addr {
	for _, ip := range ips {
		if ip.Unmap().Is4() {
			return ip
		}
	}
	return ips[0]
}

// DialAddr is the address a connection dials: the one Resolve found, or
// Addr itself before (Go's dialer then looks the name up).
func (t *Target) DialAddr() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.resolved {
		return t.ap.String()
	}
	return t.Addr
}

// addrPort is the address Socket connects to, looked up first if Resolve
// has not been.
func (t *Target) addrPort() (netip.AddrPort, error) {
	ctx, cancel := context.WithTimeout(context.Background(), socketLookupBound)
	defer cancel()
	if err := t.Resolve(ctx); err != nil {
		return netip.AddrPort{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ap, nil
}
