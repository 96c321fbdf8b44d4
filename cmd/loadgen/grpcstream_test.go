package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"loadgen/targets/grpcecho"
)

// Server- and client-streaming calls from the command line, against the
// echo target: the generator's counts are the target's.
func TestGRPCStreamingKinds(t *testing.T) {
	g := startGRPCEcho(t)
	t.Run("server-streaming", func(t *testing.T) {
		before := g.StreamedMessages()
		r := runJSON(t, "-p", "grpc-server-stream", "--messages", "8", "-c", "2", "-n", "100", g.Addr())
		m := r.Summary.Messages
		if r.Summary.Requests != 100 || m == nil || m.Count != 800 || g.StreamedMessages()-before != 800 {
			t.Fatalf("%d calls, messages %+v; the server sent %d; want 100 calls of 8", r.Summary.Requests, m, g.StreamedMessages()-before)
		}
		if r.Histograms.MessageFirst == "" || r.Histograms.MessageGap == "" {
			t.Error("the result does not keep the messages' histograms")
		}
		if r.Config.Messages != 8 || r.Config.Protocol != "grpc-server-stream" {
			t.Errorf("recorded %d messages per call, -p %s", r.Config.Messages, r.Config.Protocol)
		}
		code, out, stderr := cli(t, "run", "-q", "-p", "grpc-server-stream", "--messages", "3", "-n", "10", g.Addr())
		if code != 0 || !strings.Contains(out, "Messages: 30, ") || !strings.Contains(out, "; first p50 ") || !strings.Contains(out, "; gap p50 ") {
			t.Errorf("exit %d, summary without the messages' line:\n%s%s", code, out, stderr)
		}
	})
	t.Run("client-streaming", func(t *testing.T) {
		before, calls := g.ReceivedMessages(), g.ClientStreamCalls()
		r := runJSON(t, "-p", "grpc-client-stream", "--messages", "4", "--size", "32", "-c", "2", "-n", "50", g.Addr())
		if r.Summary.Requests != 50 || g.ClientStreamCalls()-calls != 50 || g.ReceivedMessages()-before != 200 {
			t.Errorf("%d calls; the server answered %d and read %d messages; want 50 and 200", r.Summary.Requests, g.ClientStreamCalls()-calls, g.ReceivedMessages()-before)
		}
		if r.Summary.Messages != nil || r.Config.Messages != 4 {
			t.Errorf("messages %+v, recorded %d per call", r.Summary.Messages, r.Config.Messages)
		}
	})
	t.Run("--proto with -I", func(t *testing.T) {
		root := t.TempDir()
		inc := filepath.Join(root, "include")
		os.MkdirAll(filepath.Join(inc, "loadgen"), 0o755)
		os.WriteFile(filepath.Join(inc, "loadgen", "payload.proto"), []byte(`syntax = "proto3";
package loadgen.echo.v1;
message Payload { bytes body = 1; int32 response_size = 2; int32 messages = 3; }
`), 0o644)
		svc := filepath.Join(root, "echo.proto")
		os.WriteFile(svc, []byte(`syntax = "proto3";
package loadgen.echo.v1;
import "loadgen/payload.proto";
service Echo { rpc ServerStream(Payload) returns (stream Payload); }
`), 0o644)
		before := g.StreamedMessages()
		r := runJSON(t, "-p", "grpc-server-stream", "--call", "loadgen.echo.v1.Echo/ServerStream", "--data", `{"messages":5}`,
			"--proto", svc, "-I", inc, "-n", "20", g.Addr())
		if m := r.Summary.Messages; m == nil || m.Count != 100 || g.StreamedMessages()-before != 100 {
			t.Errorf("messages %+v, the server sent %d; want 100", m, g.StreamedMessages()-before)
		}
		code, _, stderr := cli(t, "run", "-n", "1", "-p", "grpc-server-stream", "--call", "loadgen.echo.v1.Echo/ServerStream", "--proto", svc, g.Addr())
		want := "echo.proto imports loadgen/payload.proto, which is in none of the import paths searched (-I " + root + "): add the directory it is under with --import-path"
		if code != 2 || !strings.Contains(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") > 1 {
			t.Errorf("missing import: exit %d, %q; want 2 and %q", code, stderr, want)
		}
	})
	t.Run("--window", func(t *testing.T) {
		slow, err := grpcecho.New(grpcecho.Config{Addr: "127.0.0.1:0", Delay: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if err := slow.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { slow.Close() })
		r := runJSON(t, "-p", "grpc-stream", "--window", "6", "-c", "1", "-n", "60", slow.Addr())
		if r.Summary.Requests != 60 || slow.Messages() != 60 || slow.Streams() != 1 {
			t.Errorf("%d messages answered; the server answered %d on %d streams; want 60 on 1", r.Summary.Requests, slow.Messages(), slow.Streams())
		}
		if got := slow.MaxInFlight(); got != 6 {
			t.Errorf("the server held up to %d messages of the stream at once, want the window, 6", got)
		}
		if r.Config.Window != 6 || r.Config.Client != "grpc-go" {
			t.Errorf("recorded window %d, client %q", r.Config.Window, r.Config.Client)
		}
	})
	t.Run("bad input", func(t *testing.T) {
		for _, bad := range []struct {
			args []string
			msg  string
		}{
			{[]string{"-p", "grpc", "--messages", "3"}, "--messages counts a streaming call's messages: use it with -p grpc-server-stream or grpc-client-stream, not -p grpc"},
			{[]string{"-p", "grpc-client-stream", "--messages", "-1"}, "--messages"},
			{[]string{"-p", "grpc-server-stream", "--call", "loadgen.echo.v1.Echo/ServerStream", "--messages", "3"}, "server decides how many messages it sends"},
			{[]string{"-p", "grpc-server-stream", "--call", "loadgen.echo.v1.Echo/Unary"}, "Echo/Unary is unary: call it with -p grpc"},
			{[]string{"-p", "grpc-client-stream", "-I", t.TempDir()}, "--import-path describe a --call"},
			{[]string{"-p", "grpc", "--window", "4"}, "--window keeps ping-pong messages in flight on a stream: use it with -p grpc-stream, not -p grpc"},
			{[]string{"-p", "grpc-stream", "--window", "4", "--client", "x-net"}, "--client"},
			{[]string{"-p", "grpc-server-stream", "--driver", "loop"}, "--driver loop cannot drive -p grpc-server-stream"},
		} {
			code, _, stderr := cli(t, append(append([]string{"run", "-n", "1"}, bad.args...), g.Addr())...)
			if code != 2 || !strings.Contains(stderr, bad.msg) {
				t.Errorf("run %v: exit %d, %q; want 2 and %q", bad.args, code, stderr, bad.msg)
			}
		}
	})
}
