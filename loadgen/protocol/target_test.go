package protocol

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// dnsServer is a DNS server on loopback: it answers SERVFAIL to its first
// fail queries (a cluster DNS that is busy or not yet there), then A with
// 127.0.0.2 for any name but one that does not exist.
type dnsServer struct {
	pc      net.PacketConn
	mu      sync.Mutex
	fail    int
	queries int
}

func startDNS(t *testing.T, fail int) *dnsServer {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &dnsServer{pc: pc, fail: fail}
	t.Cleanup(func() { pc.Close() })
	go s.serve()
	return s
}

func (s *dnsServer) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := s.pc.ReadFrom(buf)
		if err != nil {
			return
		}
		var p dnsmessage.Parser
		h, err := p.Start(buf[:n])
		if err != nil {
			continue
		}
		q, err := p.Question()
		if err != nil {
			continue
		}
		s.mu.Lock()
		s.queries++
		failing := s.queries <= s.fail
		s.mu.Unlock()
		rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionAvailable: true}
		switch {
		case failing:
			rh.RCode = dnsmessage.RCodeServerFailure
		case strings.HasPrefix(q.Name.String(), "absent."):
			rh.RCode = dnsmessage.RCodeNameError
		}
		b := dnsmessage.NewBuilder(nil, rh)
		b.EnableCompression()
		_ = b.StartQuestions()
		_ = b.Question(q)
		_ = b.StartAnswers()
		if rh.RCode == dnsmessage.RCodeSuccess && q.Type == dnsmessage.TypeA {
			_ = b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 5}, dnsmessage.AResource{A: [4]byte{127, 0, 0, 2}})
		}
		msg, err := b.Finish()
		if err == nil {
			s.pc.WriteTo(msg, from)
		}
	}
}

func (s *dnsServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.queries
}

// resolver asks only s.
func (s *dnsServer) resolver() *net.Resolver {
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", s.pc.LocalAddr().String())
	}}
}

// A name whose lookups fail for a while is looked up until it answers, and
// once: the connections after dial the address found, with no lookup.
func TestResolveRetriesUntilTheNameAnswers(t *testing.T) {
	dns := startDNS(t, 6)
	tg := &Target{Addr: "target.test.:8080", resolver: dns.resolver()}
	if got := tg.DialAddr(); got != tg.Addr {
		t.Fatalf("before Resolve, DialAddr = %q, want the name", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := tg.Resolve(ctx); err != nil {
		t.Fatalf("Resolve after %d failed queries: %v", 6, err)
	}
	if n := dns.count(); n <= 6 {
		t.Fatalf("Resolve succeeded after %d queries, the server failed the first 6", n)
	}
	if got := tg.DialAddr(); got != "127.0.0.2:8080" {
		t.Fatalf("DialAddr = %q, want the address the DNS gave, 127.0.0.2:8080", got)
	}
	n := dns.count()
	if err := tg.Resolve(ctx); err != nil {
		t.Fatal(err)
	}
	ap, err := tg.addrPort()
	if err != nil || ap.String() != "127.0.0.2:8080" {
		t.Fatalf("the sockets' address: %v, %v", ap, err)
	}
	if dns.count() != n {
		t.Fatalf("a resolved target asked the DNS again (%d queries, then %d)", n, dns.count())
	}
}

// A name that does not exist fails at once, not at the bound: nothing
// would make it answer.
func TestResolveNameNotFound(t *testing.T) {
	dns := startDNS(t, 0)
	tg := &Target{Addr: "absent.test.:8080", resolver: dns.resolver()}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := tg.Resolve(ctx)
	var de *net.DNSError
	if !errors.As(err, &de) || !de.IsNotFound {
		t.Fatalf("Resolve of a name the DNS does not know: %v, want a not-found DNSError", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("Resolve of a missing name waited for its bound: %v", err)
	}
	if tg.DialAddr() != tg.Addr {
		t.Fatalf("a failed lookup kept an address: %q", tg.DialAddr())
	}
}

// Lookups that keep failing end with the bound, saying so.
func TestResolveEndsAtItsBound(t *testing.T) {
	dns := startDNS(t, 1<<30)
	tg := &Target{Addr: "target.test.:8080", resolver: dns.resolver()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tg.Resolve(ctx) }()
	for dns.count() < 3 { // a lookup, then a retry: the loop is in its waits
		time.Sleep(time.Millisecond)
	}
	cancel()
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "failed until the connect's bound") {
		t.Fatalf("Resolve with every query failing, its context ended: %v", err)
	}
}

// An IP address needs no lookup.
func TestResolveAddress(t *testing.T) {
	dns := startDNS(t, 0)
	tg := &Target{Addr: "[::1]:9", resolver: dns.resolver()}
	if err := tg.Resolve(context.Background()); err != nil {
		t.Fatal(err)
	}
	if tg.DialAddr() != "[::1]:9" || dns.count() != 0 {
		t.Fatalf("DialAddr %q after %d queries", tg.DialAddr(), dns.count())
	}
}
