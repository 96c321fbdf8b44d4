package rpc

import (
	"strings"
	"testing"
	"time"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"loadgen/loadgen/protocol"
	"loadgen/targets/grpcecho/echopb"
)

func TestValidate(t *testing.T) {
	ok := Config{Target: "127.0.0.1:50051"}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string // "" means valid
	}{
		{"minimal", func(c *Config) {}, ""},
		{"stream", func(c *Config) { c.Mode = Stream; c.Size = 1024; c.Streams = 10 }, ""},
		{"ipv6", func(c *Config) { c.Target = "[::1]:50051" }, ""},
		{"health", func(c *Config) { c.Health = true }, ""},
		{"metadata", func(c *Config) {
			c.Metadata = []string{"x-a: 1", "Host: echo.local", ":authority: b", "user-agent: me"}
		}, ""},
		{"tls", func(c *Config) { c.TLS = protocol.TLS{Enabled: true, Insecure: true} }, ""},
		{"response sizes", func(c *Config) { c.ResponseSize = -1 }, ""},
		{"call", func(c *Config) { c.Call = "pkg.v1.Service/Method"; c.Message = []byte{0x08, 0x01} }, ""},
		{"call path", func(c *Config) { c.Call = "/Service/Method"; c.Mode = Stream }, ""},
		{"server stream", func(c *Config) { c.Mode = ServerStream; c.Messages = 100; c.Size = 10 }, ""},
		{"client stream", func(c *Config) { c.Mode = ClientStream }, ""},
		{"server stream call", func(c *Config) { c.Mode = ServerStream; c.Call = "pkg.S/M" }, ""},
		{"messages in unary", func(c *Config) { c.Messages = 3 }, "messages per call apply to grpc-server-stream and grpc-client-stream, not grpc"},
		{"negative messages", func(c *Config) { c.Mode = ClientStream; c.Messages = -1 }, "-1 messages per call out of range"},
		{"too many messages", func(c *Config) { c.Mode = ClientStream; c.Messages = MaxMessages + 1 }, "out of range"},
		{"huge client stream", func(c *Config) { c.Mode = ClientStream; c.Messages = 5; c.Size = MaxSize }, "keep a client-streaming call within 256 MiB"},
		{"server stream call messages", func(c *Config) { c.Mode = ServerStream; c.Call = "pkg.S/M"; c.Messages = 2 }, "server decides"},
		{"no target", func(c *Config) { c.Target = "" }, "want host:port"},
		{"url target", func(c *Config) { c.Target = "http://127.0.0.1:50051" }, "no scheme"},
		{"no port", func(c *Config) { c.Target = "127.0.0.1" }, "want host:port"},
		{"bad port", func(c *Config) { c.Target = "127.0.0.1:99999" }, "port must be"},
		{"no host", func(c *Config) { c.Target = ":50051" }, "no host"},
		{"mode", func(c *Config) { c.Mode = "grpc-web" }, "unknown mode"},
		{"negative size", func(c *Config) { c.Size = -1 }, "size -1 bytes out of range"},
		{"huge size", func(c *Config) { c.Size = MaxSize + 1 }, "out of range"},
		{"response size", func(c *Config) { c.ResponseSize = -2 }, "response size"},
		{"negative streams", func(c *Config) { c.Streams = -1 }, "streams per connection"},
		{"too many streams", func(c *Config) { c.Streams = MaxStreams + 1 }, "streams per connection"},
		{"negative connections", func(c *Config) { c.Connections = -1 }, "connection count"},
		{"negative timeout", func(c *Config) { c.DialTimeout = -time.Second }, "dial timeout"},
		{"health stream", func(c *Config) { c.Health = true; c.Mode = Stream }, "health checks are unary"},
		{"health size", func(c *Config) { c.Health = true; c.Size = 10 }, "no payload"},
		{"call without method", func(c *Config) { c.Call = "pkg.Service" }, "want a full method name"},
		{"call with a bad name", func(c *Config) { c.Call = "pkg.Service/Get-It" }, "want a full method name"},
		{"call with a size", func(c *Config) { c.Call = "pkg.Service/Method"; c.Size = 10 },
			"--size applies to the echo target; with --call the message comes from --data"},
		{"call with a response size", func(c *Config) { c.Call = "pkg.Service/Method"; c.ResponseSize = -1 }, "--size applies"},
		{"call with health", func(c *Config) { c.Call = "pkg.Service/Method"; c.Health = true }, "--health calls"},
		{"huge message", func(c *Config) { c.Call = "pkg.Service/Method"; c.Message = make([]byte, MaxSize+1) }, "out of range"},
		{"message without call", func(c *Config) { c.Message = []byte{0x08, 0x01} }, "without a method"},
		{"tls options without tls", func(c *Config) { c.TLS.Insecure = true }, "add --tls"},
		{"metadata without colon", func(c *Config) { c.Metadata = []string{"x-a=1"} }, "want \"key: value\""},
		{"reserved metadata", func(c *Config) { c.Metadata = []string{"grpc-timeout: 1S"} }, "reserved"},
		{"pseudo header", func(c *Config) { c.Metadata = []string{":path: /x"} }, "reserved"},
		{"bad key", func(c *Config) { c.Metadata = []string{"x a: 1"} }, "not a valid key"},
		{"control char", func(c *Config) { c.Metadata = []string{"x-a: 1\n2"} }, "control character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			err := c.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				if _, err := NewDialer(c); err != nil {
					t.Fatalf("NewDialer: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want an error containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			if _, err := NewDialer(c); err == nil {
				t.Fatal("NewDialer accepted what Validate rejects")
			}
		})
	}
}

func TestMetadataSettings(t *testing.T) {
	s, err := Config{Target: "127.0.0.1:1", Metadata: []string{"X-Tenant:  a b ", "host: echo.local", "user-agent: lg/1"}}.settings()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.md, "|"); got != "x-tenant|a b" {
		t.Errorf("metadata = %q", got)
	}
	if s.authority != "echo.local" || s.userAgent != "lg/1" {
		t.Errorf("authority %q, user agent %q", s.authority, s.userAgent)
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"grpc": Unary, "unary": Unary, "grpc-stream": Stream, "ping-pong": Stream, " Stream ": Stream,
		"grpc-server-stream": ServerStream, "server-stream": ServerStream, "grpc-client-stream": ClientStream, "client-streaming": ClientStream} {
		if got, err := ParseMode(in); err != nil || got != want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseMode("grpc-web"); err == nil {
		t.Error("ParseMode(grpc-web) succeeded")
	}
}

// The method names are written out here so as not to import the target.
func TestMethodNames(t *testing.T) {
	if unaryMethod != echopb.Echo_Unary_FullMethodName || pingPongMethod != echopb.Echo_PingPong_FullMethodName {
		t.Errorf("echo methods %s, %s; echopb has %s, %s", unaryMethod, pingPongMethod,
			echopb.Echo_Unary_FullMethodName, echopb.Echo_PingPong_FullMethodName)
	}
	if serverMethod != echopb.Echo_ServerStream_FullMethodName || clientMethod != echopb.Echo_ClientStream_FullMethodName {
		t.Errorf("streaming methods %s, %s; echopb has %s, %s", serverMethod, clientMethod,
			echopb.Echo_ServerStream_FullMethodName, echopb.Echo_ClientStream_FullMethodName)
	}
	if healthMethod != healthpb.Health_Check_FullMethodName {
		t.Errorf("health method %s, grpc has %s", healthMethod, healthpb.Health_Check_FullMethodName)
	}
}
