package httpbin

import (
	"crypto/tls"
	"fmt"
	"net"
	"time"
)

// Defaults for the zero fields of Config.
const (
	DefaultAddr        = "127.0.0.1:0"
	DefaultMaxBytes    = 64 << 20 // largest /bytes/{n}
	DefaultMaxDelay    = 60 * time.Second
	DefaultMaxBody     = 64 << 20 // largest request body
	DefaultIdleTimeout = 2 * time.Minute
)

// maxMaxBytes bounds MaxBytes: the /bytes buffer is allocated whole in New.
const maxMaxBytes = 1 << 30

// ALPN are the protocols a TLS server serves, most preferred first: what
// its TLS configuration offers by ALPN (Config.TLS's NextProtos;
// tlscert's ServerOptions.Config takes them).
func ALPN() []string { return []string{"h2", "http/1.1"} }

// Config configures a Server. Zero fields take the defaults above.
type Config struct {
	Addr string // host:port to listen on; empty means DefaultAddr

	// TLS, when set, makes the server HTTPS only: net/http with ALPN h2 and
	// http/1.1. It must hold a certificate (see package tlscert). Nil serves
	// plaintext HTTP/1.1 (fasthttp) and h2c with prior knowledge (net/http)
	// on the one port.
	TLS *tls.Config
	// HTTP3, with TLS, serves HTTP/3 too (quic-go's http3.Server) on the
	// UDP port of the TCP port's number, and every answer over TCP
	// advertises it (Alt-Svc).
	HTTP3 bool

	MaxBytes int           // largest n of /bytes/{n}; the buffer is allocated whole
	MaxDelay time.Duration // largest d of /delay/{d}
	MaxBody  int           // largest request body; beyond it the answer is 413

	// IdleTimeout closes a connection that sends nothing for this long:
	// before its first request (which also bounds the protocol sniff) and
	// between requests.
	IdleTimeout time.Duration

	// MaxConns is the most connections served at once, as serve tcp's
	// (tcpecho.Config.MaxConns); 0 means no limit. Beyond it a new
	// connection is closed at once, by the event loops and the goroutines
	// alike, and counted as rejected.
	MaxConns int

	// Calls are the next services of a multi-hop target (call.go), each
	// http://host:port[/path]: every request but /healthz and /stats
	// calls them, and is answered once they answered. A URL without a
	// path is called with the served request's method, path, query and
	// body. Plaintext is then served by goroutines, not event loops: a
	// request waits for its calls.
	Calls []string
	// Fanout is how many calls a request makes at once, spread over
	// Calls in turn; 0 means one to each.
	Fanout int
	// CallTimeout bounds a request's calls (default DefaultCallTimeout);
	// a caller's HeaderTimeout bounds them further.
	CallTimeout time.Duration
	// CallConns bounds the connections kept open to each of Calls
	// (default DefaultCallConns); a call waits for a free one.
	CallConns int
}

// Validate reports the first thing wrong with c, in one line.
func (c Config) Validate() error {
	if c.Addr != "" {
		if _, _, err := net.SplitHostPort(c.Addr); err != nil {
			return fmt.Errorf("httpbin: listen address %q: want host:port", c.Addr)
		}
	}
	if c.HTTP3 && c.TLS == nil {
		return fmt.Errorf("httpbin: HTTP/3 runs over QUIC, always TLS: it needs a TLS config")
	}
	if c.TLS != nil && len(c.TLS.Certificates) == 0 && c.TLS.GetCertificate == nil && c.TLS.GetConfigForClient == nil {
		return fmt.Errorf("httpbin: TLS config has no certificate")
	}
	switch {
	case c.MaxBytes < 0 || c.MaxBytes > maxMaxBytes:
		return fmt.Errorf("httpbin: max bytes must be 0 (default %d) up to %d, not %d", DefaultMaxBytes, maxMaxBytes, c.MaxBytes)
	case c.MaxDelay < 0:
		return fmt.Errorf("httpbin: max delay must be 0 (default %v) or more, not %v", DefaultMaxDelay, c.MaxDelay)
	case c.MaxBody < 0:
		return fmt.Errorf("httpbin: max body must be 0 (default %d) or more, not %d", DefaultMaxBody, c.MaxBody)
	case c.MaxConns < 0:
		return fmt.Errorf("httpbin: max connections must be 0 (no limit) or more, not %d", c.MaxConns)
	case c.IdleTimeout < 0:
		return fmt.Errorf("httpbin: idle timeout must be 0 (default %v) or more, not %v", DefaultIdleTimeout, c.IdleTimeout)
	case c.Fanout < 0 || c.Fanout > maxFanout:
		return fmt.Errorf("httpbin: fanout must be 0 (one call to each URL) up to %d, not %d", maxFanout, c.Fanout)
	case c.Fanout > 0 && len(c.Calls) == 0:
		return fmt.Errorf("httpbin: fanout %d without a URL to call", c.Fanout)
	case c.CallTimeout < 0:
		return fmt.Errorf("httpbin: call timeout must be 0 (default %v) or more, not %v", DefaultCallTimeout, c.CallTimeout)
	case c.CallConns < 0:
		return fmt.Errorf("httpbin: call connections must be 0 (default %d) or more, not %d", DefaultCallConns, c.CallConns)
	case len(c.Calls) > maxFanout:
		return fmt.Errorf("httpbin: at most %d URLs to call, not %d", maxFanout, len(c.Calls))
	}
	for _, u := range c.Calls {
		if _, err := parseCall(u); err != nil {
			return err
		}
	}
	return nil
}

// CallsAtOnce is how many calls a request makes at once: Fanout, or one
// to each of Calls when it is 0; none without Calls.
func (c Config) CallsAtOnce() int {
	if c.Fanout == 0 || len(c.Calls) == 0 {
		return len(c.Calls)
	}
	return c.Fanout
}

// withDefaults returns c with its zero fields set to the defaults.
func (c Config) withDefaults() Config {
	if c.Addr == "" {
		c.Addr = DefaultAddr
	}
	if c.MaxBytes == 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.MaxDelay == 0 {
		c.MaxDelay = DefaultMaxDelay
	}
	if c.MaxBody == 0 {
		c.MaxBody = DefaultMaxBody
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.CallTimeout == 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	if c.CallConns == 0 {
		c.CallConns = DefaultCallConns
	}
	return c
}
