package sweep

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"loadgen/loadgen"
)

// A sweep's feed: each step's requests take the CSV's rows in the
// endpoint's {{row.COLUMN}} fields, as run's --feed, from the first row.
func TestStepFeed(t *testing.T) {
	var mu sync.Mutex
	var got []string
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.Query().Get("u")+"/"+r.URL.Query().Get("n"))
		mu.Unlock()
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	feed := filepath.Join(t.TempDir(), "users.csv")
	if err := os.WriteFile(feed, []byte("user\nada\nbob\ncy\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Parse(strings.NewReader("paths: [{name: direct, url: \"http://" + ln.Addr().String() + "\"}]\n" +
		"ladder: c1t1\npayloads: [7]\nduration: 1s\nendpoint: \"/get?u={{row.user}}&n={size}\"\nfeed: " + feed + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	for step := range 2 {
		mu.Lock()
		got = nil
		mu.Unlock()
		cfg, d, err := BuildStep(&s, s.Paths[0], s.Plan()[0])
		if err != nil {
			t.Fatal(err)
		}
		cfg.Duration, cfg.Requests, cfg.Warmup = 0, 4, 0
		run, err := loadgen.Run(t.Context(), cfg, d)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		slices.Sort(got)
		want := []string{"ada/7", "ada/7", "bob/7", "cy/7"}
		if !slices.Equal(got, want) {
			t.Errorf("step %d: the server got %q, want %q", step, got, want)
		}
		mu.Unlock()
		if run.Config.Feed != feed {
			t.Errorf("step %d: the result records feed %q, want %q", step, run.Config.Feed, feed)
		}
	}
}

// A sweep's proto and import_paths: the call's types come from the
// files (the target is never asked: nothing listens there), the imports
// found in the import paths.
func TestStepProto(t *testing.T) {
	root := t.TempDir()
	inc := filepath.Join(root, "include")
	if err := os.MkdirAll(filepath.Join(inc, "loadgen"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(inc, "loadgen", "payload.proto"), []byte("syntax = \"proto3\";\npackage loadgen.echo.v1;\nmessage Payload {\n  bytes body = 1;\n  int32 response_size = 2;\n  int32 messages = 3;\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	svc := filepath.Join(root, "echo.proto")
	if err := os.WriteFile(svc, []byte("syntax = \"proto3\";\npackage loadgen.echo.v1;\nimport \"loadgen/payload.proto\";\nservice Echo {\n  rpc ServerStream(Payload) returns (stream Payload);\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	base := "paths: [{name: echo, url: \"127.0.0.1:1\"}]\nladder: c1t1\nduration: 1s\nprotocol: grpc-server-stream\ncall: loadgen.echo.v1.Echo/ServerStream\ndata: '{\"messages\": 2}'\nproto: [" + svc + "]\n"
	build := func(spec string) error {
		s, err := Parse(strings.NewReader(spec))
		if err != nil {
			t.Fatalf("%q: %v", spec, err)
		}
		_, d, err := BuildStep(&s, s.Paths[0], s.Plan()[0])
		if c, ok := d.(io.Closer); ok {
			c.Close()
		}
		return err
	}
	if err := build(base + "import_paths: [" + inc + "]\n"); err != nil {
		t.Errorf("with import_paths: %v", err)
	}
	err := build(base)
	if err == nil || !strings.Contains(err.Error(), "imports loadgen/payload.proto") {
		t.Errorf("without import_paths: %v, want that the import is not found", err)
	}
}
