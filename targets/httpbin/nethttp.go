package httpbin

import (
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
