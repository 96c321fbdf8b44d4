package httpbin

import (
	"net"
	"testing"

	"loadgen/internal/allocs"
	"loadgen/internal/race"

	"github.com/valyala/fasthttp"
)

// fastCtx is a fasthttp request as the server's handler sees it.
func fastCtx(uri string) *fasthttp.RequestCtx {
	var req fasthttp.Request
	req.SetRequestURI(uri)
	req.Header.SetHost("127.0.0.1:8080")
	req.Header.Set("User-Agent", "loadgen")
	req.Header.Set("Accept", "*/*")
	ctx := new(fasthttp.RequestCtx)
	ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}, nil)
	return ctx
}

// TestHotPathAllocs checks that the fasthttp handler allocates nothing for
// /bytes/N and the small echo documents, once warm.
func TestHotPathAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are measured without -race (make test)")
	}
	s, err := New(Config{MaxBytes: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{"/bytes/100", "/get", "/get?a=1&b=2", "/headers", "/anything/x", "/status/204"} {
		t.Run(uri, func(t *testing.T) {
			ctx := fastCtx(uri)
			run := func() {
				ctx.Response.Reset()
				s.serveFast(ctx)
			}
			run()
			if ctx.Response.StatusCode()/100 != 2 {
				t.Fatalf("status %d: %s", ctx.Response.StatusCode(), ctx.Response.Body())
			}
			if n := allocs.Count(1000, run); n > allocs.Slack {
				t.Errorf("%d allocations in 1000 requests, want 0", n)
			}
		})
	}
}

func BenchmarkFastBytes100(b *testing.B) {
	benchFast(b, "/bytes/100")
}

func BenchmarkFastGet(b *testing.B) {
	benchFast(b, "/get?a=1")
}

func benchFast(b *testing.B, uri string) {
	s, err := New(Config{MaxBytes: 1 << 10})
	if err != nil {
		b.Fatal(err)
	}
	ctx := fastCtx(uri)
	b.ReportAllocs()
	for b.Loop() {
		ctx.Response.Reset()
		s.serveFast(ctx)
	}
}
