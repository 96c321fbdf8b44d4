package rpc

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/reflection"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	rpbalpha "google.golang.org/grpc/reflection/grpc_reflection_v1alpha"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"loadgen/internal/testport"
	"loadgen/loadgen/protocol"
	"loadgen/targets/grpcecho"
	"loadgen/targets/grpcecho/echopb"
)

func resolve(t *testing.T, cfg Config, method, data, protoset string) (call string, msg []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	call, msg, err := ResolveCall(ctx, cfg, method, data, Types{Protoset: protoset})
	if err != nil {
		t.Fatalf("ResolveCall(%s, %s): %v", method, data, err)
	}
	return call, msg
}

// resolveFails checks ResolveCall fails with one line containing want.
func resolveFails(t *testing.T, cfg Config, method, data, protoset, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	_, _, err := ResolveCall(ctx, cfg, method, data, Types{Protoset: protoset})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("ResolveCall(%s, %s) = %v, want an error containing %q", method, data, err, want)
	}
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error spans lines: %q", err)
	}
}

// doN makes n Dos on c, each of which must get a good reply of replyBytes
// (prefix included) for a request of written bytes.
func doN(t *testing.T, c protocol.Conn, n int, written, replyBytes int64) {
	t.Helper()
	for i := range n {
		o := c.Do(context.Background(), time.Now().Add(hangGuard))
		if o.Err != protocol.None || o.Done || o.Status != 0 || o.Written != written || o.Bytes != replyBytes {
			t.Fatalf("call %d: %+v, want %d bytes written, %d read", i, o, written, replyBytes)
		}
	}
}

func TestCallByReflection(t *testing.T) {
	srv := startEcho(t, grpcecho.Config{})
	call, msg := resolve(t, Config{Target: srv.Addr()}, "loadgen.echo.v1.Echo/Unary", `{"body":"aGVsbG8=","responseSize":7}`, "")
	if call != unaryMethod {
		t.Errorf("call %q, want %q", call, unaryMethod)
	}
	var p echopb.Payload
	if err := proto.Unmarshal(msg, &p); err != nil || string(p.Body) != "hello" || p.ResponseSize != 7 {
		t.Fatalf("message decodes to %v (%v)", &p, err)
	}
	eachClient(t, func(t *testing.T, cl client) {
		before := srv.Calls()
		c := dial(t, cl.dialer(t, Config{Target: srv.Addr(), Call: call, Message: msg}))
		doN(t, c, 20, int64(prefixLen+len(msg)), wireSize(7))
		if got := srv.Calls() - before; got != 20 {
			t.Errorf("server answered %d calls, want 20", got)
		}
	})
}

func TestCallHealth(t *testing.T) {
	srv := startEcho(t, grpcecho.Config{})
	for _, data := range []string{"{}", ""} {
		call, msg := resolve(t, Config{Target: srv.Addr()}, "/grpc.health.v1.Health/Check", data, "")
		if call != healthMethod || len(msg) != 0 {
			t.Fatalf("data %q: call %q, message % x; want %q and the empty message", data, call, msg, healthMethod)
		}
	}
	eachClient(t, func(t *testing.T, cl client) {
		before := srv.HealthChecks()
		c := dial(t, cl.dialer(t, Config{Target: srv.Addr(), Call: healthMethod}))
		doN(t, c, 10, prefixLen, prefixLen+2) // status SERVING
		if got := srv.HealthChecks() - before; got != 10 {
			t.Errorf("server answered %d health checks, want 10", got)
		}
	})
}

// Echo/PingPong as a Call, found by reflection: one message in flight per
// stream, as with the built-in ping-pong.
func TestCallPingPong(t *testing.T) {
	srv := startEcho(t, grpcecho.Config{})
	call, msg := resolve(t, Config{Target: srv.Addr(), Mode: Stream}, "loadgen.echo.v1.Echo/PingPong", `{"body":"cGluZw=="}`, "")
	if call != pingPongMethod {
		t.Errorf("call %q, want %q", call, pingPongMethod)
	}
	eachClient(t, func(t *testing.T, cl client) {
		before := srv.Messages()
		c := dial(t, cl.dialer(t, Config{Target: srv.Addr(), Mode: Stream, Call: call, Message: msg}))
		doN(t, c, 10, wireSize(4), wireSize(4))
		if got := srv.Messages() - before; got != 10 {
			t.Errorf("server answered %d messages, want 10", got)
		}

		inFlight, addr := startInFlight(t)
		d := cl.dialer(t, Config{Target: addr, Mode: Stream, Call: call, Message: msg, Streams: 2})
		doAll(t, []protocol.Conn{dial(t, d), dial(t, d)}, 20, 0)
		if got := inFlight.messages.Load(); got != 40 {
			t.Errorf("server answered %d messages, want 40", got)
		}
		if m := inFlight.max.Load(); m != 1 {
			t.Errorf("up to %d messages in flight on a stream, want 1", m)
		}
	})
}

// writeProtoset writes the files and every file they import as a
// FileDescriptorSet, as protoc --include_imports --descriptor_set_out does.
// Without imports, only the files themselves.
func writeProtoset(t *testing.T, imports bool, files ...protoreflect.FileDescriptor) string {
	t.Helper()
	set := new(descriptorpb.FileDescriptorSet)
	seen := map[string]bool{}
	var add func(fd protoreflect.FileDescriptor)
	add = func(fd protoreflect.FileDescriptor) {
		if seen[fd.Path()] {
			return
		}
		seen[fd.Path()] = true
		if imports {
			for i := range fd.Imports().Len() {
				add(fd.Imports().Get(i).FileDescriptor)
			}
		}
		set.File = append(set.File, protodesc.ToFileDescriptorProto(fd))
	}
	for _, fd := range files {
		add(fd)
	}
	b, err := proto.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "types.protoset")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A server without reflection: the types come from a protoset.
func TestCallProtoset(t *testing.T) {
	inFlight, addr := startInFlight(t) // Echo, no reflection
	set := writeProtoset(t, true, echopb.File_echo_proto)
	cfg := Config{Target: addr, Mode: Stream}
	call, msg := resolve(t, cfg, "loadgen.echo.v1.Echo/PingPong", `{"body":"aGk="}`, set)
	eachClient(t, func(t *testing.T, cl client) {
		before := inFlight.messages.Load()
		cfg := cfg
		cfg.Call, cfg.Message = call, msg
		doN(t, dial(t, cl.dialer(t, cfg)), 10, wireSize(2), wireSize(2))
		if got := inFlight.messages.Load() - before; got != 10 {
			t.Errorf("server answered %d messages, want 10", got)
		}
	})

	resolveFails(t, cfg, "loadgen.echo.v1.Echo/PingPong", "", "",
		addr+" has no reflection service: give the types with --protoset FILE (protoc --descriptor_set_out)")
	resolveFails(t, cfg, "loadgen.echo.v1.Nope/PingPong", "", set,
		"protoset "+set+" has no service loadgen.echo.v1.Nope: it has loadgen.echo.v1.Echo")
	resolveFails(t, cfg, "loadgen.echo.v1.Echo/PingPong", "", filepath.Join(t.TempDir(), "none"), "--protoset: open")
	garbage := filepath.Join(t.TempDir(), "garbage")
	if err := os.WriteFile(garbage, []byte("not a descriptor set"), 0o600); err != nil {
		t.Fatal(err)
	}
	resolveFails(t, cfg, "loadgen.echo.v1.Echo/PingPong", "", garbage, "is not a FileDescriptorSet")
	resolveFails(t, cfg, "loadgen.calltest.v1.Test/Upper", "", writeProtoset(t, false, testFile(t)), "protoc --include_imports")
}

func TestCallErrors(t *testing.T) {
	srv := startEcho(t, grpcecho.Config{})
	closed := testport.Closed(t)
	for _, tc := range []struct {
		name, method, data, want string
		edit                     func(*Config)
	}{
		{"unknown method", "loadgen.echo.v1.Echo/Nope", "", "service loadgen.echo.v1.Echo has no method Nope: it has Unary, PingPong", nil},
		{"unknown service", "loadgen.echo.v1.Nope/Unary", "", srv.Addr() + " has no service loadgen.echo.v1.Nope: it has grpc.health.v1.Health, ", nil},
		{"unknown field", "loadgen.echo.v1.Echo/Unary", `{"bogus":1}`, `unknown field "bogus"`, nil}, // protojson's words, which it varies on purpose
		{"bad value", "loadgen.echo.v1.Echo/Unary", `{"responseSize":"x"}`, "--data is not a loadgen.echo.v1.Payload: ", nil},
		{"not JSON", "loadgen.echo.v1.Echo/Unary", `body=1`, "--data is not a loadgen.echo.v1.Payload: ", nil},
		{"unary in Stream mode", "loadgen.echo.v1.Echo/Unary", "", "loadgen.echo.v1.Echo/Unary is unary: call it with -p grpc (-p grpc-stream calls bidi-streaming methods)",
			func(c *Config) { c.Mode = Stream }},
		{"bidi in Unary mode", "loadgen.echo.v1.Echo/PingPong", "", "loadgen.echo.v1.Echo/PingPong is bidi-streaming: call it with -p grpc-stream (-p grpc calls unary methods)", nil},
		{"size", "loadgen.echo.v1.Echo/Unary", "", "--size applies to the echo target; with --call the message comes from --data",
			func(c *Config) { c.Size = 10 }},
		{"health", "grpc.health.v1.Health/Check", "", "--health calls grpc.health.v1.Health/Check", func(c *Config) { c.Health = true }},
		{"not a method", "loadgen.echo.v1.Echo.Unary", "", "want a full method name", nil},
		{"no server", "loadgen.echo.v1.Echo/Unary", "", "asking " + closed + " for its types by reflection", func(c *Config) { c.Target = closed }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Target: srv.Addr()}
			if tc.edit != nil {
				tc.edit(&cfg)
			}
			resolveFails(t, cfg, tc.method, tc.data, "", tc.want)
		})
	}
}

// A reply that is not protobuf is a protocol error; any well-formed one
// will do.
func TestCallReplyCheck(t *testing.T) {
	bad := startFake(t, []byte{0x0a, 0x05, 'x'}) // a field longer than the message
	good := startFake(t, []byte{0x0d, 1, 2, 3, 4, 0x12, 0x01, 'x'})
	eachClientMode(t, func(t *testing.T, cl client, mode Mode) {
		cfg := Config{Target: bad, Mode: mode, Call: "/any.Service/Method", Message: []byte{0x08, 0x01}}
		if o := dial(t, cl.dialer(t, cfg)).Do(context.Background(), time.Time{}); o.Err != protocol.Protocol {
			t.Errorf("malformed reply: %+v, want a protocol error", o)
		}
		cfg.Target = good
		doN(t, dial(t, cl.dialer(t, cfg)), 3, prefixLen+2, prefixLen+8)
	})
}

// testFile declares loadgen.calltest.v1.Test, whose types are all
// imported: resolving its methods takes the files it imports.
func testFile(t *testing.T) protoreflect.FileDescriptor {
	t.Helper()
	s := proto.String
	fd, err := protodesc.NewFile(&descriptorpb.FileDescriptorProto{
		Name:       s("loadgen/calltest/v1/test.proto"),
		Package:    s("loadgen.calltest.v1"),
		Dependency: []string{"google/protobuf/empty.proto", "google/protobuf/wrappers.proto"},
		Syntax:     s("proto3"),
		Service: []*descriptorpb.ServiceDescriptorProto{{
			Name: s("Test"),
			Method: []*descriptorpb.MethodDescriptorProto{
				{Name: s("Upper"), InputType: s(".google.protobuf.StringValue"), OutputType: s(".google.protobuf.StringValue")},
				{Name: s("Watch"), InputType: s(".google.protobuf.Empty"), OutputType: s(".google.protobuf.Empty"), ServerStreaming: proto.Bool(true)},
			},
		}},
	}, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	return fd
}

// startTest serves loadgen.calltest.v1.Test/Upper, and reflection as
// register registers it, describing testFile and its imports.
func startTest(t *testing.T, register func(*grpc.Server, reflection.ServerOptions)) (addr string, calls *atomic.Int64) {
	files := new(protoregistry.Files)
	for _, fd := range []protoreflect.FileDescriptor{testFile(t), emptypb.File_google_protobuf_empty_proto, wrapperspb.File_google_protobuf_wrappers_proto} {
		if err := files.RegisterFile(fd); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	calls = new(atomic.Int64)
	gs := grpc.NewServer()
	gs.RegisterService(&grpc.ServiceDesc{
		ServiceName: "loadgen.calltest.v1.Test",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Upper", Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			in := new(wrapperspb.StringValue)
			if err := dec(in); err != nil {
				return nil, err
			}
			calls.Add(1)
			return wrapperspb.String(strings.ToUpper(in.GetValue())), nil
		}}},
		Metadata: "loadgen/calltest/v1/test.proto",
	}, struct{}{})
	register(gs, reflection.ServerOptions{Services: gs, DescriptorResolver: files})
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	return ln.Addr().String(), calls
}

// depsByName is a reflection service that sends a file without its
// imports, as some servers do: the client asks for them by name, and asked
// counts how often.
type depsByName struct {
	rpb.ServerReflectionServer
	asked *atomic.Int64
}

func (d depsByName) ServerReflectionInfo(st rpb.ServerReflection_ServerReflectionInfoServer) error {
	return d.ServerReflectionServer.ServerReflectionInfo(fileOnly{st, d.asked})
}

type fileOnly struct {
	rpb.ServerReflection_ServerReflectionInfoServer
	asked *atomic.Int64
}

func (s fileOnly) Recv() (*rpb.ServerReflectionRequest, error) {
	r, err := s.ServerReflection_ServerReflectionInfoServer.Recv()
	if r.GetFileByFilename() != "" {
		s.asked.Add(1)
	}
	return r, err
}

func (s fileOnly) Send(r *rpb.ServerReflectionResponse) error {
	if f := r.GetFileDescriptorResponse(); f != nil {
		f.FileDescriptorProto = f.FileDescriptorProto[:1] // the file asked for comes first
	}
	return s.ServerReflection_ServerReflectionInfoServer.Send(r)
}

// A service whose types are imported, from servers with the older
// reflection service only, or one whose reflection sends imports only when
// asked for them.
func TestCallImports(t *testing.T) {
	asked := new(atomic.Int64)
	for _, tc := range []struct {
		name     string
		register func(*grpc.Server, reflection.ServerOptions)
		asked    int64 // files the client asks for by name
	}{
		{"v1alpha only", func(gs *grpc.Server, o reflection.ServerOptions) {
			rpbalpha.RegisterServerReflectionServer(gs, reflection.NewServer(o))
		}, 0},
		{"imports by name", func(gs *grpc.Server, o reflection.ServerOptions) {
			rpb.RegisterServerReflectionServer(gs, depsByName{reflection.NewServerV1(o), asked})
		}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr, calls := startTest(t, tc.register)
			call, msg := resolve(t, Config{Target: addr}, "loadgen.calltest.v1.Test/Upper", `"hello"`, "")
			if want, _ := proto.Marshal(wrapperspb.String("hello")); string(msg) != string(want) {
				t.Fatalf("message % x, want % x", msg, want)
			}
			if got := asked.Swap(0); got != tc.asked {
				t.Errorf("the client asked for %d files by name, want %d", got, tc.asked)
			}
			c := dial(t, newDialer(t, Config{Target: addr, Call: call, Message: msg}))
			doN(t, c, 5, int64(prefixLen+len(msg)), int64(prefixLen+len(msg))) // "HELLO"
			if calls.Load() != 5 {
				t.Errorf("server answered %d calls, want 5", calls.Load())
			}
			resolveFails(t, Config{Target: addr}, "loadgen.calltest.v1.Test/Watch", "", "",
				"loadgen.calltest.v1.Test/Watch is server-streaming: call it with -p grpc-server-stream (-p grpc calls unary methods)")
		})
	}
}
