package httpbin

import (
	"errors"
	"net"
	"net/netip"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"
)

// The fasthttp adapter: plaintext HTTP/1.1, the hot path. It routes with
// match, answers with handle and writes without copying or allocating:
// /bytes bodies are slices of the shared buffer, echo bodies are swapped in.

// newFast configures the fasthttp server of plaintext HTTP/1.1.
func (s *Server) newFast() *fasthttp.Server {
	// No ReadTimeout or IdleTimeout: they cost two deadline updates per
	// request. The reaper (idle.go) closes idle connections instead.
	return &fasthttp.Server{
		Handler:                      s.serveFast,
		ErrorHandler:                 s.fastError,
		Logger:                       nopLogger{},
		ReadBufferSize:               16 << 10, // mesh proxies add headers
		MaxRequestBodySize:           s.cfg.MaxBody,
		NoDefaultServerHeader:        true,
		DisablePreParseMultipartForm: true,
		LazyRequestTime:              true,
	}
}

func (s *Server) serveFast(ctx *fasthttp.RequestCtx) {
	rt, param := s.routes.match(ctx.Path())
	if chained(rt) && (s.caller != nil || len(ctx.Request.Header.Peek(HeaderHop)) > 0) {
		s.serveFastHop(ctx, rt, param)
		return
	}
	rep := s.handle(rt, ctx.Method(), param, (*fastReq)(ctx))
	s.writeFast(ctx, &rep)
}

// serveFastHop serves a request of a chain (call.go): its calls first,
// then the endpoint, and the hop headers.
func (s *Server) serveFastHop(ctx *fasthttp.RequestCtx, rt *route, param []byte) {
	h := &ctx.Request.Header
	n, deadline, refused := hopOf(h.Peek(HeaderHop), h.Peek(HeaderTimeout), s.cfg.CallTimeout)
	if refused != nil {
		s.writeFast(ctx, refused)
		return
	}
	res := hopResult{hops: n}
	if s.caller != nil {
		in := hopIn{method: ctx.Method(), uri: ctx.RequestURI(), body: ctx.PostBody(), hop: n, deadline: deadline}
		var f *fan
		f, res = s.caller.call(&in)
		defer s.caller.release(f)
	}
	var num [20]byte
	if res.failed != 0 {
		s.counts.add(res.status)
		resp := &ctx.Response
		resp.SetStatusCode(res.status)
		resp.Header.SetContentType(textType)
		resp.SetBody(res.msg) // a copy: the fan goes back before the write
		resp.Header.SetBytesV(HeaderHopFailed, strconv.AppendInt(num[:0], int64(res.failed), 10))
	} else {
		rep := s.handle(rt, ctx.Method(), param, (*fastReq)(ctx))
		s.writeFast(ctx, &rep)
	}
	ctx.Response.Header.SetBytesV(HeaderHops, strconv.AppendInt(num[:0], int64(res.hops), 10))
}

// fastError answers a request fasthttp could not read: a body over
// MaxBody (413), headers over the read buffer (431), garbage (400).
func (s *Server) fastError(ctx *fasthttp.RequestCtx, err error) {
	var rep reply
	var small *fasthttp.ErrSmallBuffer
	var ne net.Error
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		rep = s.tooLarge()
	case errors.As(err, &small):
		rep = reply{status: 431, ctype: textType, text: "request headers too large\n"}
	case errors.As(err, &ne) && ne.Timeout():
		rep = reply{status: 408, ctype: textType, text: "request timeout\n"}
	default:
		rep = reply{status: 400, ctype: textType, text: "malformed request\n"}
	}
	s.writeFast(ctx, &rep)
}

func (s *Server) writeFast(ctx *fasthttp.RequestCtx, rep *reply) {
	if !rep.quiet {
		s.counts.add(rep.status)
	}
	resp := &ctx.Response
	resp.SetStatusCode(rep.status)
	resp.Header.SetContentType(rep.ctype)
	if rep.allow != "" {
		resp.Header.Set("Allow", rep.allow)
	}
	switch {
	case rep.req != nil:
		// The document moves into the response; its old buffer moves into
		// the pooled request.
		rep.req.out = resp.SwapBody(rep.body)[:0]
		s.release(rep.req)
	case rep.body != nil:
		resp.SetBodyRaw(rep.body)
	default:
		resp.SetBodyString(rep.text)
	}
}

// fastReq is the fasthttp adapter's source.
type fastReq fasthttp.RequestCtx

func (f *fastReq) fill(r *request, body bool) bool {
	ctx := (*fasthttp.RequestCtx)(f)
	r.method = ctx.Method()
	r.https = ctx.IsTLS()
	r.host = ctx.Host()
	r.uri = ctx.RequestURI()
	if body {
		r.body = ctx.PostBody()
	}
	for k, v := range ctx.Request.Header.All() {
		r.header = append(r.header, kv{k, v})
	}
	if ip, ok := netip.AddrFromSlice(ctx.RemoteIP()); ok {
		n := len(r.arena)
		r.arena = ip.Unmap().AppendTo(r.arena)
		r.remote = r.arena[n:len(r.arena):len(r.arena)]
	}
	return true // fasthttp has enforced MaxBody already
}

// pollEvery is how often a waiting fasthttp request checks its client is
// still there: fasthttp does not watch the connection during a handler.
const pollEvery = 50 * time.Millisecond

func (f *fastReq) wait(d time.Duration, done <-chan struct{}) bool {
	c := (*fasthttp.RequestCtx)(f).Conn()
	t := time.NewTimer(d)
	defer t.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		select {
		case <-t.C:
			return true
		case <-done:
			return false
		case <-tick.C:
			if !peerOpen(c) {
				return false
			}
		}
	}
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}
