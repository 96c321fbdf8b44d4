package rpc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"loadgen/loadgen/protocol"
	"loadgen/targets/grpcecho"
)

// writeFile writes body at dir/name, making its directories.
func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// echoProtos writes the echo service as a user's .proto files would be:
// the service in one directory, importing its message from another (an
// import path) and a well-known type.
func echoProtos(t *testing.T) (service, includes string) {
	root := t.TempDir()
	includes = filepath.Join(root, "include")
	writeFile(t, includes, "loadgen/echo/v1/payload.proto", `syntax = "proto3";
package loadgen.echo.v1;
message Payload {
  bytes body = 1;
  int32 response_size = 2;
  int32 messages = 3;
}
`)
	service = writeFile(t, filepath.Join(root, "api"), "echo.proto", `syntax = "proto3";
package loadgen.echo.v1;
import "loadgen/echo/v1/payload.proto";
import "google/protobuf/empty.proto";
service Echo {
  rpc Unary(Payload) returns (Payload);
  rpc ServerStream(Payload) returns (stream Payload);
  rpc Ping(google.protobuf.Empty) returns (google.protobuf.Empty);
}
`)
	return service, includes
}

// --proto with an import found through --import-path, and a well-known
// type: the call is made against the target.
func TestCallProtoFile(t *testing.T) {
	srv := startEcho(t, grpcecho.Config{})
	service, includes := echoProtos(t)
	from := Types{Proto: []string{service}, ImportPaths: []string{includes}}
	call, msg, err := ResolveCall(t.Context(), Config{Target: srv.Addr(), Mode: ServerStream}, "loadgen.echo.v1.Echo/ServerStream", `{"body":"aGk=","messages":3}`, from)
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, newDialer(t, Config{Target: srv.Addr(), Mode: ServerStream, Call: call, Message: msg}))
	sink := new(sinkCount)
	c.(protocol.MessageConn).SetMessageSink(sink)
	doN(t, c, 2, int64(prefixLen+len(msg)), 3*wireSize(2))
	if sink.n != 6 || srv.StreamedMessages() != 6 {
		t.Errorf("%d messages told, the server sent %d; want 6", sink.n, srv.StreamedMessages())
	}
}

func TestCallProtoFileErrors(t *testing.T) {
	service, includes := echoProtos(t)
	other := t.TempDir()
	bad := writeFile(t, other, "bad.proto", "syntax = \"proto3\";\nmessage {\n")
	cfg := Config{Target: "127.0.0.1:1"} // never dialed: the types come from the files
	for _, tc := range []struct {
		name string
		from Types
		want string
	}{
		{"import not found", Types{Proto: []string{service}, ImportPaths: []string{other}},
			service + " imports loadgen/echo/v1/payload.proto, which is in none of the import paths searched (-I " + other + ", -I " + filepath.Dir(service) + "): add the directory it is under with --import-path"},
		{"through a file", Types{Proto: []string{service}, ImportPaths: []string{fileDir(t)}},
			service + " imports loadgen/echo/v1/payload.proto, which is in none of the import paths searched"},
		{"no import path", Types{Proto: []string{service}},
			"imports loadgen/echo/v1/payload.proto, which is in none of the import paths searched (-I " + filepath.Dir(service) + ")"},
		{"no such file", Types{Proto: []string{filepath.Join(other, "nope.proto")}}, "--proto: stat " + filepath.Join(other, "nope.proto")},
		{"syntax", Types{Proto: []string{bad}}, "--proto " + bad + ": bad.proto:2:9"},
		{"not a directory", Types{Proto: []string{service}, ImportPaths: []string{service}}, "--import-path " + service + " is not a directory"},
		{"import path alone", Types{ImportPaths: []string{includes}}, "give the .proto file with --proto"},
		{"both", Types{Proto: []string{service}, Protoset: "x.pb"}, "give one of them"},
		{"no service", Types{Proto: []string{filepath.Join(includes, "loadgen/echo/v1/payload.proto")}}, "has no service loadgen.echo.v1.Echo: it has none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resolveFrom(t, cfg, "loadgen.echo.v1.Echo/Unary", tc.from, tc.want)
		})
	}
}

// resolveFrom checks ResolveCall with types from fails with one line
// containing want.
func resolveFrom(t *testing.T, cfg Config, method string, from Types, want string) {
	t.Helper()
	_, _, err := ResolveCall(t.Context(), cfg, method, "", from)
	if err == nil || !contains(err.Error(), want) {
		t.Fatalf("ResolveCall = %v, want an error containing %q", err, want)
	}
	if contains(err.Error(), "\n") {
		t.Errorf("error spans lines: %q", err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// fileDir is a directory holding a file named "loadgen", as the first
// directory of the echo's import.
func fileDir(t *testing.T) string {
	dir := t.TempDir()
	writeFile(t, dir, "loadgen", "not a directory")
	return dir
}
