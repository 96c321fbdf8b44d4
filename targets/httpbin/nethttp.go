package httpbin

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
)

// The net/http adapter: chi routes the table; TLS (h2 and http/1.1) and
// h2c with prior knowledge are served by it, as is anyone using Handler.

// newRouter builds the chi router of the route table.
func (s *Server) newRouter() http.Handler {
	r := chi.NewRouter()
	for i := range s.routes {
		rt := &s.routes[i]
		h := func(w http.ResponseWriter, req *http.Request) {
			var param []byte
			if rt.param != "" {
				param = []byte(chi.URLParam(req, rt.param))
			}
			s.serveHTTP(w, req, rt, param)
		}
		if rt.methods == nil {
			r.HandleFunc(rt.pattern, h)
			continue
		}
		for _, m := range rt.methods {
			r.MethodFunc(m, rt.pattern, h)
		}
	}
	r.NotFound(func(w http.ResponseWriter, req *http.Request) {
		s.serveHTTP(w, req, nil, nil)
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, req *http.Request) {
		rt, _ := s.routes.match([]byte(req.URL.Path)) // for the Allow header
		s.serveHTTP(w, req, rt, nil)
	})
	return r
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request, rt *route, param []byte) {
	if chained(rt) && (s.caller != nil || r.Header.Get(HeaderHop) != "") && r.ContentLength <= int64(s.cfg.MaxBody) {
		if !s.hopHTTP(w, r) {
			return
		}
	}
	var rep reply
	if r.ContentLength > int64(s.cfg.MaxBody) {
		rep = s.tooLarge()
	} else {
		rep = s.handle(rt, []byte(r.Method), param, &httpReq{s: s, w: w, r: r})
	}
	if !rep.quiet {
		s.counts.add(rep.status)
	}
	h := w.Header()
	if rep.ctype != "" {
		h.Set("Content-Type", rep.ctype)
	}
	if rep.allow != "" {
		h.Set("Allow", rep.allow)
	}
	n := len(rep.body) + len(rep.text)
	if n > 0 {
		h.Set("Content-Length", strconv.Itoa(n))
	}
	w.WriteHeader(rep.status)
	if rep.body != nil {
		w.Write(rep.body)
	} else if rep.text != "" {
		io.WriteString(w, rep.text)
	}
	if rep.req != nil {
		s.release(rep.req)
	}
}

// hopHTTP makes the calls of a request of a chain (call.go) and sets the
// hop headers. It reports false when it answered: a failed call, or a
// refused hop.
func (s *Server) hopHTTP(w http.ResponseWriter, r *http.Request) bool {
	n, deadline, refused := hopOf([]byte(r.Header.Get(HeaderHop)), []byte(r.Header.Get(HeaderTimeout)), s.cfg.CallTimeout)
	if refused != nil {
		s.counts.add(refused.status)
		http.Error(w, refused.text[:len(refused.text)-1], refused.status)
		return false
	}
	res := hopResult{hops: n}
	if s.caller != nil {
		if d, ok := r.Context().Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		in := hopIn{method: []byte(r.Method), uri: []byte(r.RequestURI), hop: n, deadline: deadline}
		if r.Body != nil && r.Body != http.NoBody {
			body, err := readAll(nil, http.MaxBytesReader(w, r.Body, int64(s.cfg.MaxBody)))
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				rep := s.tooLarge()
				s.counts.add(rep.status)
				http.Error(w, rep.text[:len(rep.text)-1], rep.status)
				return false
			}
			in.body = body
			r.Body = io.NopCloser(bytes.NewReader(body)) // for the endpoint
		}
		var f *fan
		f, res = s.caller.call(&in)
		defer s.caller.release(f)
	}
	h := w.Header()
	h.Set(HeaderHops, strconv.Itoa(res.hops))
	if res.failed == 0 {
		return true
	}
	s.counts.add(res.status)
	h.Set(HeaderHopFailed, strconv.Itoa(res.failed))
	h.Set("Content-Type", textType)
	h.Set("Content-Length", strconv.Itoa(len(res.msg)))
	w.WriteHeader(res.status)
	w.Write(res.msg)
	return false
}

// httpReq is the net/http adapter's source.
type httpReq struct {
	s *Server
	w http.ResponseWriter
	r *http.Request
}

func (h *httpReq) fill(q *request, body bool) bool {
	r := h.r
	q.method = q.keep(r.Method)
	q.https = r.TLS != nil
	q.host = q.keep(r.Host)
	q.uri = q.keep(r.RequestURI)
	q.header = append(q.header, kv{q.keep("Host"), q.host})
	for k, vs := range r.Header {
		kb := q.keep(k)
		for _, v := range vs {
			q.header = append(q.header, kv{kb, q.keep(v)})
		}
	}
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		q.remote = q.keep(host)
	} else {
		q.remote = q.keep(r.RemoteAddr)
	}
	if !body || r.Body == nil {
		return true
	}
	if r.ContentLength > 0 {
		q.data = growTo(q.data, int(r.ContentLength))
	}
	var err error
	q.data, err = readAll(q.data[:0], http.MaxBytesReader(h.w, r.Body, int64(h.s.cfg.MaxBody)))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return false
	}
	q.body = q.data // a body cut short by the client is echoed as far as it came
	return true
}

func (h *httpReq) wait(d time.Duration, done <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-done:
		return false
	case <-h.r.Context().Done():
		return false
	}
}

// readAll appends all of r to dst.
func readAll(dst []byte, r io.Reader) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// growTo returns b with room for n bytes, its contents dropped.
func growTo(b []byte, n int) []byte {
	if cap(b) >= n+1 {
		return b[:0]
	}
	return make([]byte, 0, n+1) // +1: the read that sees EOF needs room
}
