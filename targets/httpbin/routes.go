package httpbin

import (
	"bytes"
	"strconv"
	"strings"
	"time"
)

// endpoint names what a route does; handle is the one place that does it.
type endpoint uint8

const (
	epBytes endpoint = iota + 1
	epGet
	epPost
	epAnything
	epStatus
	epDelay
	epHeaders
	epHealthz
	epStats
)

// route is one line of the route table. chi routes net/http requests by
// pattern; match routes fasthttp requests by the same table.
type route struct {
	pattern string   // chi pattern
	ep      endpoint //
	methods []string // nil: any method
	allow   string   // methods, for the Allow header of a 405

	prefix string // the pattern up to its {param} or *
	param  string // the name of its {param}, if any
	wild   bool   // ends in /*
}

type routes []route

// newRoutes is the route table, the hottest route first.
func newRoutes() routes {
	rs := routes{
		{pattern: "/bytes/{n}", ep: epBytes},
		{pattern: "/get", ep: epGet, methods: []string{"GET", "HEAD"}},
		{pattern: "/post", ep: epPost, methods: []string{"POST"}},
		{pattern: "/anything", ep: epAnything},
		{pattern: "/anything/*", ep: epAnything},
		{pattern: "/status/{code}", ep: epStatus},
		{pattern: "/delay/{d}", ep: epDelay},
		{pattern: "/headers", ep: epHeaders, methods: []string{"GET", "HEAD"}},
		{pattern: "/healthz", ep: epHealthz},
		{pattern: "/stats", ep: epStats, methods: []string{"GET", "HEAD"}},
	}
	for i := range rs {
		r := &rs[i]
		r.allow = strings.Join(r.methods, ", ")
		switch {
		case strings.HasSuffix(r.pattern, "/*"):
			r.prefix, r.wild = strings.TrimSuffix(r.pattern, "*"), true
		case strings.HasSuffix(r.pattern, "}"):
			i := strings.LastIndexByte(r.pattern, '{')
			r.prefix, r.param = r.pattern[:i], r.pattern[i+1:len(r.pattern)-1]
		}
	}
	return rs
}

// match finds the route of path and its parameter, as chi would.
func (rs routes) match(path []byte) (*route, []byte) {
	for i := range rs {
		r := &rs[i]
		switch {
		case r.param != "":
			if p, ok := cutPrefix(path, r.prefix); ok && len(p) > 0 && bytes.IndexByte(p, '/') < 0 {
				return r, p
			}
		case r.wild:
			if _, ok := cutPrefix(path, r.prefix); ok {
				return r, nil
			}
		case string(path) == r.pattern:
			return r, nil
		}
	}
	return nil, nil
}

func cutPrefix(b []byte, prefix string) ([]byte, bool) {
	if !hasPrefix(b, prefix) {
		return b, false
	}
	return b[len(prefix):], true
}

func (r *route) allows(method []byte) bool {
	if r.methods == nil {
		return true
	}
	for _, m := range r.methods {
		if string(method) == m {
			return true
		}
	}
	return false
}

// reply is an endpoint's answer, written by an adapter.
type reply struct {
	status int
	ctype  string
	text   string   // the body when body is nil
	body   []byte   // a slice of the /bytes buffer or of req.out
	allow  string   // the Allow header of a 405
	req    *request // pooled; the adapter releases it once body is written
	quiet  bool     // not counted: /healthz and /stats
}

const (
	textType   = "text/plain; charset=utf-8"
	jsonType   = "application/json"
	binaryType = "application/octet-stream"
)

// source is an adapter's view of the request being served.
type source interface {
	// fill copies the request into r, with its body when body is set. It
	// reports false when the body is over MaxBody.
	fill(r *request, body bool) bool
	// wait sleeps for d. It reports false, early, when the client went
	// away or done was closed.
	wait(d time.Duration, done <-chan struct{}) bool
}

// handle serves one request for either adapter: rt and param are the
// route and path parameter (rt nil: no route matched).
func (s *Server) handle(rt *route, method, param []byte, src source) reply {
	switch {
	case rt == nil:
		return reply{status: 404, ctype: textType, text: "404 page not found\n"}
	case !rt.allows(method):
		return reply{status: 405, ctype: textType, text: "405 method not allowed\n", allow: rt.allow}
	}
	switch rt.ep {
	case epBytes:
		n, err := parseBytes(param, s.cfg.MaxBytes)
		if err != nil {
			return badRequest(err)
		}
		return reply{status: 200, ctype: binaryType, body: s.payload[:n:n]}
	case epStatus:
		code, err := parseStatus(param)
		if err != nil {
			return badRequest(err)
		}
		return reply{status: code, ctype: textType}
	case epDelay:
		d, err := parseDelay(param, s.cfg.MaxDelay)
		if err != nil {
			return badRequest(err)
		}
		s.counts.waiting.Add(1)
		ok := src.wait(d, s.done)
		s.counts.waiting.Add(-1)
		if !ok {
			return reply{status: 503, ctype: textType, text: "delay interrupted\n", quiet: true}
		}
		return s.echo(src, delayFields)
	case epGet:
		return s.echo(src, getFields)
	case epPost:
		return s.echo(src, postFields)
	case epAnything:
		return s.echo(src, anythingFields)
	case epHeaders:
		return s.echo(src, headersFields)
	case epHealthz:
		return reply{status: 200, ctype: textType, text: "ok", quiet: true}
	case epStats:
		req := s.acquire()
		req.out = s.counts.appendJSON(req.out[:0])
		return reply{status: 200, ctype: jsonType, body: req.out, req: req, quiet: true}
	}
	panic("httpbin: route without endpoint: " + rt.pattern)
}

// echo answers with the request as an httpbin JSON document.
func (s *Server) echo(src source, f fields) reply {
	req := s.acquire()
	if !src.fill(req, f&fData != 0) {
		s.release(req)
		return s.tooLarge()
	}
	req.out = appendEcho(req.out[:0], req, f)
	return reply{status: 200, ctype: jsonType, body: req.out, req: req}
}

func badRequest(err error) reply {
	return reply{status: 400, ctype: textType, text: err.Error() + "\n"}
}

func (s *Server) tooLarge() reply {
	return reply{status: 413, ctype: textType, text: "request body must be at most " + strconv.Itoa(s.cfg.MaxBody) + " bytes\n"}
}

func (s *Server) acquire() *request { return s.reqs.Get().(*request) }

func (s *Server) release(r *request) {
	r.reset()
	s.reqs.Put(r)
}
