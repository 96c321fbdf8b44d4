package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"loadgen/targets/grpcecho"
	"loadgen/targets/httpbin"
	"loadgen/targets/listening"
	"loadgen/targets/tcpecho"
	"loadgen/targets/tlscert"
	"loadgen/targets/udpecho"
)

func newServeCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "serve TARGET",
		Short: "Start a target server (httpbin, grpc, tcp, udp) until Ctrl-C",
		Long: `Start one of loadgen's target servers in the foreground. It runs until
Ctrl-C (or --for elapses) and then prints how many requests it served.`,
		Example: `  loadgen serve httpbin --addr 127.0.0.1:8080
  loadgen serve httpbin --addr 127.0.0.1:8443 --tls     # HTTP/1.1, h2 and HTTP/3 on 8443
  loadgen serve grpc --addr 127.0.0.1:9090
  loadgen serve tcp --addr 127.0.0.1:9001
  loadgen serve udp --addr 127.0.0.1:9002`,
	}
	cmd.AddCommand(newServeHTTPBinCmd(), newServeGRPCCmd(), newServeTCPCmd(), newServeUDPCmd())
	return cmd
}

// serverTLS are the TLS flags of every target: tlscert's policy.
type serverTLS struct{ tlscert.ServerOptions }

func (s *serverTLS) register(fl *pflag.FlagSet) {
	fl.BoolVar(&s.TLS, "tls", false, "serve TLS with a self-signed certificate (or --cert/--key)")
	fl.StringVar(&s.KeyType, "key-type", "rsa", "key of the self-signed certificate: rsa (RSA-2048) or ecdsa (P-256)")
	fl.StringVar(&s.CertFile, "cert", "", "PEM certificate file, e.g. server.crt (implies --tls; default a self-signed one with --tls)")
	fl.StringVar(&s.KeyFile, "key", "", "PEM key file for --cert, e.g. server.key")
	fl.StringVar(&s.WriteCA, "write-ca", "", "write the self-signed certificate (PEM) to this file, e.g. ca.pem, for clients' --cacert")
	fl.StringVar(&s.ClientCA, "client-ca", "", "require a client certificate issued by these CAs (PEM file, e.g. client-ca.pem) on every connection: mutual TLS (needs --tls or --cert)")
}

// serveUntil waits for ctx (Ctrl-C) or the --for duration.
func serveUntil(ctx context.Context, d time.Duration) {
	if d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	<-ctx.Done()
}

func newServeHTTPBinCmd() *cobra.Command {
	var (
		cfg    httpbin.Config
		st     serverTLS
		runFor time.Duration
		http3  bool
	)
	cmd := &cobra.Command{
		Use:   "httpbin",
		Short: "httpbin-style HTTP target: /get /post /anything /bytes/N /status/C /delay/D /headers",
		Long: `An httpbin-style HTTP target. Plaintext serves HTTP/1.1 and h2c (prior
knowledge) on one port; --tls serves HTTP/2 and HTTP/1.1 by ALPN, and
HTTP/3 on the UDP port of the same number (advertised by Alt-Svc on the
TCP answers; --http3=false leaves it out).

Endpoints: /get, /post, /anything (echo method, headers, body), /bytes/{n},
/status/{code}, /delay/{d} (10ms, 1.5s or seconds), /headers, /healthz, and
/stats: the count of requests served, so a run can be checked against it.

--call makes it a hop of a multi-hop target (isotope-style): every request but
/healthz and /stats first calls the next service(s) and is answered once they
answered. A URL without a path is called with the request's own method, path,
query and body. Each answer says how many hops answered (X-Loadgen-Hops); a
failed call makes it a 502 whose one-line body names the hop that failed
(X-Loadgen-Hop-Failed).`,
		Example: `  loadgen serve httpbin --addr 127.0.0.1:8080
  loadgen serve httpbin --addr 127.0.0.1:8443 --tls --write-ca ca.pem
  loadgen run -p h3 --cacert ca.pem -d 10s https://127.0.0.1:8443/get
  loadgen serve httpbin --addr 127.0.0.1:8082
  loadgen serve httpbin --addr 127.0.0.1:8081 --call http://127.0.0.1:8082
  loadgen serve httpbin --addr 127.0.0.1:8080 --call http://127.0.0.1:8081 --fanout 4`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tc, err := st.Config(httpbin.ALPN()...)
			if err != nil {
				return err
			}
			cfg.TLS = tc
			cfg.HTTP3 = tc != nil && http3
			srv, err := httpbin.New(cfg)
			if err != nil {
				return err
			}
			if err := srv.Start(); err != nil {
				return failf("%v", err)
			}
			scheme, protos := "http", "HTTP/1.1 + h2c"
			if tc != nil {
				scheme, protos = "https", "h2 + HTTP/1.1 by ALPN"
				if cfg.HTTP3 {
					protos += "; HTTP/3 on UDP " + srv.Addr()
				}
			}
			out := cmd.OutOrStdout()
			fmt.Fprintln(out, listening.Line("httpbin", scheme+"://"+srv.Addr(), " ("+protos+st.Mode()+")"))
			if len(cfg.Calls) > 0 {
				fmt.Fprintf(out, "each request first calls %s (%d at once)\n", strings.Join(cfg.Calls, ", "), cfg.CallsAtOnce())
			}
			serveUntil(cmd.Context(), runFor)
			return closeServer(out, srv.Close, func() string { return fmt.Sprintf("served %d requests", srv.Served()) })
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfg.Addr, "addr", "127.0.0.1:8080", "address to listen on")
	bytesVar(fl, &cfg.MaxBytes, "max-bytes", httpbin.DefaultMaxBytes, "largest n of /bytes/{n} (bytes: 10MiB)")
	durationVarP(fl, &cfg.MaxDelay, "max-delay", "", httpbin.DefaultMaxDelay, "largest d of /delay/{d}")
	bytesVar(fl, &cfg.MaxBody, "max-body", httpbin.DefaultMaxBody, "largest request body (413 beyond; bytes: 1MiB)")
	countVarP(fl, &cfg.MaxConns, "max-conns", "", 0, "refuse connections beyond this many at once (0: no limit)")
	fl.StringSliceVar(&cfg.Calls, "call", nil, "call these next services (http://host:port[/path], comma-separated, e.g. http://127.0.0.1:8081/get) before answering each request: a multi-hop target")
	countVarP(fl, &cfg.Fanout, "fanout", "", 0, "with --call: calls per request, made at once and spread over the URLs in turn (default one to each)")
	durationVarP(fl, &cfg.CallTimeout, "call-timeout", "", httpbin.DefaultCallTimeout, "with --call: the most a request's calls take (a caller's own time left bounds it further); past it the answer is a 502")
	countVarP(fl, &cfg.CallConns, "call-conns", "", httpbin.DefaultCallConns, "with --call: connections kept open to each URL at most (a call waits for a free one)")
	durationVarP(fl, &runFor, "for", "", 0, "stop by itself after this long, e.g. 5m (default: until Ctrl-C)")
	fl.BoolVar(&http3, "http3", true, "with --tls, serve HTTP/3 too, on the UDP port of the same number")
	st.register(fl)
	return cmd
}

func closeServer(out io.Writer, closeFn func() error, summary func() string) error {
	err := closeFn()
	fmt.Fprintf(out, "stopped: %s\n", summary())
	if err != nil {
		return failf("close: %v", err)
	}
	return nil
}

func newServeTCPCmd() *cobra.Command {
	var (
		cfg    tcpecho.Config
		runFor time.Duration
	)
	cmd := &cobra.Command{
		Use:   "tcp",
		Short: "raw TCP target: echo (tcp-rr, tcp-crr) and sink (tcp-stream) on one port",
		Long: `A raw TCP target for netperf-style runs. A connection is an echo (every byte
is written back) unless it opens with loadgen's sink preamble, which -p
tcp-stream sends: then it is a sink that reads and counts.`,
		Example: `  loadgen serve tcp --addr 127.0.0.1:9000
  loadgen run -p tcp-rr --size 1024 -d 10s 127.0.0.1:9000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			alone, restore := cfg.Alone() // this process serves the target only
			defer restore()
			srv, err := tcpecho.New(alone)
			if err != nil {
				return err
			}
			if err := srv.Start(); err != nil {
				return failf("%v", err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintln(out, listening.Line("tcp echo/sink", srv.Addr(), ""))
			serveUntil(cmd.Context(), runFor)
			return closeServer(out, srv.Close, func() string {
				return fmt.Sprintf("%d connections, %d bytes echoed, %d bytes sunk", srv.Accepted(), srv.Echoed(), srv.Sunk())
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfg.Addr, "addr", "127.0.0.1:9000", "address to listen on")
	countVarP(fl, &cfg.MaxConns, "max-conns", "", 0, "refuse connections beyond this many at once (0: no limit)")
	durationVarP(fl, &runFor, "for", "", 0, "stop by itself after this long, e.g. 5m (default: until Ctrl-C)")
	return cmd
}

func newServeUDPCmd() *cobra.Command {
	var (
		cfg    udpecho.Config
		runFor time.Duration
	)
	cmd := &cobra.Command{
		Use:   "udp",
		Short: "UDP target: echo (udp-rr) and counting sink (udp-stream) on one port",
		Long: `A UDP target for netperf-style runs. A datagram is sent back as it came
(udp-rr), unless its sender opened itself as a sink with loadgen's control
datagram, which -p udp-stream sends: then its datagrams are counted and
dropped, and the sender is told the count when it asks, so that a run's loss
is what this end received.

--drop-every N drops every Nth datagram on purpose: a known loss, to check
that a path's loss accounting sees it.`,
		Example: `  loadgen serve udp --addr 127.0.0.1:9001
  loadgen run -p udp-rr --size 64 -d 10s 127.0.0.1:9001
  loadgen run -p udp-stream --size 1400 -R 50k -d 10s 127.0.0.1:9001`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			srv, err := udpecho.New(cfg)
			if err != nil {
				return err
			}
			if err := srv.Start(); err != nil {
				return failf("%v", err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintln(out, listening.Line("udp echo/sink", srv.Addr(), ""))
			serveUntil(cmd.Context(), runFor)
			return closeServer(out, srv.Close, func() string {
				msg := fmt.Sprintf("%d datagrams echoed, %d sunk (%d bytes)", srv.Echoed(), srv.Sunk(), srv.SunkBytes())
				if cfg.DropEvery > 0 {
					msg += fmt.Sprintf(", %d dropped on purpose", srv.Dropped())
				}
				return msg
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfg.Addr, "addr", "127.0.0.1:9001", "address to listen on")
	countVarP(fl, &cfg.DropEvery, "drop-every", "", 0, "drop every Nth datagram, echoed or sunk, on purpose (0: none)")
	durationVarP(fl, &runFor, "for", "", 0, "stop by itself after this long, e.g. 5m (default: until Ctrl-C)")
	return cmd
}

func newServeGRPCCmd() *cobra.Command {
	var (
		cfg    grpcecho.Config
		st     serverTLS
		runFor time.Duration
	)
	cmd := &cobra.Command{
		Use:   "grpc",
		Short: "gRPC target: Echo (unary, ping-pong, server and client streams), health, reflection",
		Long: `A gRPC target (grpc-go): loadgen.echo.v1.Echo/Unary echoes each payload,
Echo/PingPong answers each stream message with one (the ping-pong of the CNI
studies), Echo/ServerStream answers one payload with Payload.messages of them,
Echo/ClientStream reads a stream of payloads and answers one counting them,
grpc.health.v1 reports SERVING, and reflection lets grpcurl, ghz and fortio
drive it too. With --delay, a ping-pong stream's messages are read as they
come, each answered a delay after it arrived.`,
		Example: `  loadgen serve grpc --addr 127.0.0.1:9090
  loadgen run -p grpc -c 50 -d 10s --size 1024 127.0.0.1:9090
  loadgen run -p grpc-stream -c 1 -d 30s 127.0.0.1:9090
  loadgen run -p grpc-server-stream --messages 100 -c 4 -d 10s 127.0.0.1:9090
  loadgen run -p grpc-client-stream --messages 100 -c 4 -d 10s 127.0.0.1:9090`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tc, err := st.Config(grpcecho.ALPN()...)
			if err != nil {
				return err
			}
			cfg.TLS = tc
			srv, err := grpcecho.New(cfg)
			if err != nil {
				return err
			}
			if err := srv.Start(); err != nil {
				return failf("%v", err)
			}
			out := cmd.OutOrStdout()
			mode := "plaintext (h2c)"
			if tc != nil {
				mode = "TLS"
			}
			fmt.Fprintln(out, listening.Line("grpc", srv.Addr(), ", "+mode+st.Mode()))
			serveUntil(cmd.Context(), runFor)
			return closeServer(out, srv.Close, func() string {
				return fmt.Sprintf("%d unary calls, %d ping-pong messages, %d server-streaming calls (%d messages), %d client-streaming calls (%d messages), %d health checks",
					srv.Calls(), srv.Messages(), srv.ServerStreamCalls(), srv.StreamedMessages(), srv.ClientStreamCalls(), srv.ReceivedMessages(), srv.HealthChecks())
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cfg.Addr, "addr", "127.0.0.1:9090", "address to listen on")
	bytesVar(fl, &cfg.MaxMessage, "max-message", grpcecho.DefaultMaxMessage, "largest message (bytes: 4MiB)")
	durationVarP(fl, &cfg.Delay, "delay", "", 0, "answer every call and message after this long, e.g. 5ms (a slow backend; default 0s: at once)")
	durationVarP(fl, &runFor, "for", "", 0, "stop by itself after this long, e.g. 5m (default: until Ctrl-C)")
	st.register(fl)
	return cmd
}
