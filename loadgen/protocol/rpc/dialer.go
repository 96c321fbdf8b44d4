package rpc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/h2conn"
	"loadgen/loadgen/protocol/h2wire"
)

// maxMessage bounds a message: a body of MaxSize and its tags.
const maxMessage = MaxSize + 64

// Dialer hands out Conns, Config.Streams of them per HTTP/2 connection:
// Dials 1…m share the first connection, m+1…2m the second, and so on. A
// connection is closed with its last Conn. h2conn does the connection's
// work. It is safe for concurrent use.
type Dialer struct {
	s      settings
	tls    *tls.Config // nil for plaintext
	req    []byte      // the request as sent: prefix and message; shared, read-only
	body   []byte      // what a call sends: req, or (ClientStream) Messages of it; shared, read-only
	fields []h2wire.Field
	check  replyCheck
	core   *h2conn.Dialer
	sock   protocol.Target // for the event loop's sockets (plaintext unary)
}

var (
	_ protocol.Dialer      = (*Dialer)(nil)
	_ protocol.ConnCounter = (*Dialer)(nil)
)

// NewDialer validates cfg and builds the request once.
func NewDialer(cfg Config) (*Dialer, error) {
	s, err := cfg.settings()
	if err != nil {
		return nil, err
	}
	if s.Window > 1 {
		return nil, fmt.Errorf("grpc: loadgen's own client keeps one message in flight per stream: a window of %d runs on grpc-go's (NewLibraryDialer)", s.Window)
	}
	d := &Dialer{s: s, req: newRequest(s), check: s.replyCheck(), sock: protocol.Target{Addr: s.Target}}
	d.body = s.callBody(d.req)
	if s.TLS.Enabled {
		if d.tls, err = s.TLS.Config(s.host, "h2"); err != nil {
			return nil, err
		}
	}
	d.fields = requestFields(s, d.tls != nil, s.method())
	d.core = h2conn.NewDialer(h2conn.Config{
		Name:        "grpc",
		Addr:        s.Target,
		Dest:        &d.sock,
		TLS:         d.tls,
		DialTimeout: s.DialTimeout,
		Streams:     s.Streams,
		Fields:      d.fields,
		Want:        wantFields,
	})
	return d, nil
}

// StreamsMessages tells that the calls answer with streams of messages
// (ServerStream mode): protocol.MessageDialer.
func (d *Dialer) StreamsMessages() bool { return d.s.Mode == ServerStream }

// Resolve looks the target's name up once, before a run (protocol.Resolver).
func (d *Dialer) Resolve(ctx context.Context) error { return d.sock.Resolve(ctx) }

// Opened counts the HTTP/2 connections really established: those whose
// target answered with HTTP/2 settings.
func (d *Dialer) Opened() int64 { return d.core.Opened() }

// Dial returns a Conn on the current connection, opening a connection when
// the current one has Streams Conns already or cannot take more, bounded by
// ctx and Config.DialTimeout. In Stream mode it also opens the Conn's
// ping-pong stream. In ServerStream mode the Conn is a
// protocol.MessageConn. Its errors are one line saying what is wrong: not a
// gRPC server, TLS expected, certificate not trusted …
func (d *Dialer) Dial(ctx context.Context) (protocol.Conn, error) {
	if d.s.Mode.streamsCalls() {
		c := &unaryConn{}
		if err := c.init(ctx, d, true); err != nil {
			return nil, err
		}
		return c, nil
	}
	ctx, cancel := context.WithTimeout(ctx, d.s.DialTimeout)
	defer cancel()
	for try := 1; ; try++ {
		c := &streamConn{}
		if err := c.init(ctx, d, false); err != nil {
			return nil, err
		}
		err := c.open(ctx)
		if err == nil {
			return c, nil
		}
		c.Close()
		if err != errGoingAway || try == 2 { // GOAWAY came meanwhile: once more, elsewhere
			return nil, fmt.Errorf("grpc: opening a ping-pong stream on %s: %w", d.s.Target, err)
		}
	}
}

// explain says why a connection could not be opened, in what to do.
func (d *Dialer) explain(err error) error {
	var de *h2conn.DialError
	if !errors.As(err, &de) {
		return err
	}
	target := d.s.Target
	switch de.Stage {
	case h2conn.StageTCP:
		return fmt.Errorf("grpc: %w", de.Err)
	case h2conn.StageTLS:
		return explainHandshake(target, d.s.DialTimeout, de.Err)
	case h2conn.StageALPN:
		if de.Err != nil {
			return explainHandshake(target, d.s.DialTimeout, de.Err)
		}
		p := de.ALPN
		if p == "" {
			p = "none"
		}
		return fmt.Errorf("grpc: %s does not offer HTTP/2 over TLS (ALPN h2; it chose %s): it is not a gRPC server, or serves only HTTP/1.1", target, p)
	}
	if de.Protocol {
		return fmt.Errorf("grpc: %s: %w", target, de.Err) // the peer broke HTTP/2 in its settings
	}
	return d.notHTTP2(de)
}

// notHTTP2 explains what the target sent instead of HTTP/2 settings.
func (d *Dialer) notHTTP2(de *h2conn.DialError) error {
	target, head, err := d.s.Target, de.Head, de.Err
	switch {
	case protocol.TextHead(head) != "":
		// An HTTP/1.1 server's status line, or the page some send without
		// one ("<!DOCTYPE …") to a request line they cannot read.
		return fmt.Errorf("grpc: %s answered %s: the server answered HTTP/1.1, not HTTP/2/gRPC: it is not a gRPC server (an HTTP/1.1-only server or proxy?)", target, protocol.TextHead(head))
	case len(head) >= 2 && head[0] == 0x15 && head[1] == 0x03:
		return fmt.Errorf("grpc: %s answered with a TLS alert: it expects TLS, add --tls", target)
	case len(head) == 0:
		how := "closed the connection"
		switch {
		case de.Silent():
			how = "accepted the connection but sent nothing before the dial deadline"
		case err != nil && !errors.Is(err, io.EOF):
			how = "reset the connection"
		}
		hint := " (does it expect TLS? add --tls)"
		if d.tls != nil {
			hint = ""
		}
		return fmt.Errorf("grpc: %s %s without an HTTP/2 answer: is it a gRPC server?%s", target, how, hint)
	}
	return fmt.Errorf("grpc: %s did not answer with HTTP/2 settings (first bytes % x): it is not a gRPC server", target, head)
}

// explainHandshake turns a TLS handshake error into what to do about it.
func explainHandshake(target string, limit time.Duration, err error) error {
	switch msg := err.Error(); {
	case strings.Contains(msg, "first record does not look like a TLS handshake"):
		return fmt.Errorf("grpc: TLS handshake with %s: %w (the target speaks plaintext: drop --tls)", target, err)
	case strings.Contains(msg, "no application protocol"):
		return fmt.Errorf("grpc: TLS handshake with %s: %w (it does not offer HTTP/2, ALPN h2: not a gRPC server, or HTTP/1.1 only)", target, err)
	}
	return fmt.Errorf("grpc: %w", protocol.HandshakeError(target, limit, err))
}
