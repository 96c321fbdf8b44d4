package grpcecho

import (
	"bytes"
	"context"
	"crypto/tls"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"loadgen/targets/grpcecho/echopb"
	"loadgen/targets/tlscert"
)

func start(t *testing.T, cfg Config) *Server {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func client(t *testing.T, addr string, opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	if len(opts) == 0 {
		opts = []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
	}
	cc, err := grpc.NewClient("passthrough:///"+addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string // "" means valid
	}{
		{"zero", Config{}, ""},
		{"addr", Config{Addr: "127.0.0.1:0"}, ""},
		{"bad addr", Config{Addr: "localhost"}, "host:port"},
		{"negative max", Config{MaxMessage: -1}, "out of range"},
		{"huge max", Config{MaxMessage: 2 << 30}, "out of range"},
		{"negative delay", Config{Delay: -time.Second}, "negative delay"},
		{"tls without cert", Config{TLS: &tls.Config{}}, "without a certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestUnary(t *testing.T) {
	s := start(t, Config{})
	ec := echopb.NewEchoClient(client(t, s.Addr()))
	body := bytes.Repeat([]byte("x"), 1000)
	for _, tc := range []struct {
		name string
		in   *echopb.Payload
		want int
	}{
		{"echo", &echopb.Payload{Body: body}, len(body)},
		{"empty", &echopb.Payload{}, 0},
		{"sized", &echopb.Payload{Body: body, ResponseSize: 70000}, 70000},
		{"sized small", &echopb.Payload{ResponseSize: 10}, 10},
		{"empty reply", &echopb.Payload{Body: body, ResponseSize: -1}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := ec.Unary(ctx(t), tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Body) != tc.want {
				t.Fatalf("reply body %d bytes, want %d", len(out.Body), tc.want)
			}
			if tc.in.ResponseSize == 0 && !bytes.Equal(out.Body, tc.in.Body) {
				t.Fatal("reply body is not the request's")
			}
		})
	}
	if got := s.Calls(); got != 5 {
		t.Errorf("Calls = %d, want 5", got)
	}
}

func TestResponseTooLarge(t *testing.T) {
	s := start(t, Config{MaxMessage: 1000})
	ec := echopb.NewEchoClient(client(t, s.Addr()))
	_, err := ec.Unary(ctx(t), &echopb.Payload{ResponseSize: 1001})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("err = %v, want InvalidArgument", err)
	}
}

func TestPingPong(t *testing.T) {
	s := start(t, Config{})
	ec := echopb.NewEchoClient(client(t, s.Addr()))
	const streams, n = 3, 50
	var wg sync.WaitGroup
	errs := make(chan error, streams)
	for range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := ec.PingPong(ctx(t))
			if err != nil {
				errs <- err
				return
			}
			for i := range n {
				body := []byte{byte(i)}
				if err := st.Send(&echopb.Payload{Body: body}); err != nil {
					errs <- err
					return
				}
				out, err := st.Recv()
				if err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(out.Body, body) {
					errs <- status.Errorf(codes.DataLoss, "message %d: reply %v", i, out.Body)
					return
				}
			}
			errs <- st.CloseSend()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := s.Messages(); got != streams*n {
		t.Errorf("Messages = %d, want %d", got, streams*n)
	}
	if got := s.Streams(); got != streams {
		t.Errorf("Streams = %d, want %d", got, streams)
	}
}

func TestHealthAndReflection(t *testing.T) {
	s := start(t, Config{})
	cc := client(t, s.Addr())
	for _, svc := range []string{"", "loadgen.echo.v1.Echo"} {
		resp, err := healthpb.NewHealthClient(cc).Check(ctx(t), &healthpb.HealthCheckRequest{Service: svc})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("health of %q = %v, want SERVING", svc, resp.Status)
		}
	}
	if got := s.HealthChecks(); got != 2 {
		t.Errorf("HealthChecks = %d, want 2", got)
	}

	rc, err := reflectpb.NewServerReflectionClient(cc).ServerReflectionInfo(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Send(&reflectpb.ServerReflectionRequest{MessageRequest: &reflectpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	resp, err := rc.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, svc := range resp.GetListServicesResponse().GetService() {
		names = append(names, svc.Name)
	}
	got := strings.Join(names, " ")
	for _, want := range []string{"loadgen.echo.v1.Echo", "grpc.health.v1.Health"} {
		if !strings.Contains(got, want) {
			t.Errorf("reflection lists %q, want %s among them", got, want)
		}
	}
}

func TestTLS(t *testing.T) {
	cert, err := tlscert.New(tlscert.ECDSAP256)
	if err != nil {
		t.Fatal(err)
	}
	s := start(t, Config{TLS: &tls.Config{Certificates: []tls.Certificate{cert.TLS}}})
	creds := credentials.NewTLS(&tls.Config{RootCAs: cert.Pool(), ServerName: "localhost"})
	ec := echopb.NewEchoClient(client(t, s.Addr(), grpc.WithTransportCredentials(creds)))
	if _, err := ec.Unary(ctx(t), &echopb.Payload{Body: []byte("hi")}); err != nil {
		t.Fatal(err)
	}
}

func TestDelay(t *testing.T) {
	s := start(t, Config{Delay: time.Hour})
	ec := echopb.NewEchoClient(client(t, s.Addr()))
	c, cancel := context.WithTimeout(ctx(t), 20*time.Millisecond)
	defer cancel()
	_, err := ec.Unary(c, &echopb.Payload{})
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	// Close cancels the delayed calls rather than waiting an hour.
	st, err := ec.PingPong(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&echopb.Payload{}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := st.Recv(); err == nil {
		t.Fatal("Recv succeeded on a closed server")
	}
}

func TestLifecycle(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil { // never started
		t.Fatal(err)
	}
	if err := s.Start(); err == nil {
		t.Fatal("Start after Close succeeded")
	}
	s = start(t, Config{})
	if err := s.Start(); err == nil {
		t.Fatal("second Start succeeded")
	}
	if strings.HasSuffix(s.Addr(), ":0") {
		t.Fatalf("Addr = %s, want the real port", s.Addr())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// Close leaves no goroutine of the server running, streams open or not.
func TestCloseLeavesNothing(t *testing.T) {
	before := runtime.NumGoroutine()
	s, err := New(Config{Delay: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	cc, err := grpc.NewClient("passthrough:///"+s.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	st, err := echopb.NewEchoClient(cc).PingPong(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&echopb.Payload{}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	cc.Close()
	deadline := time.Now().Add(30 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Fatalf("%d goroutines, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}
