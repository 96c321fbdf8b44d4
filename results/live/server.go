package live

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
)

//go:embed page.html
var pageHTML string

//go:embed page.css
var pageCSS string

//go:embed page.js
var pageJS string

// page is the one document the dashboard serves: its style and script
// inline, so that it fetches nothing but its own data.
var page = strings.NewReplacer("/*STYLE*/", pageCSS, "/*SCRIPT*/", pageJS).Replace(pageHTML)

// Paths the Handler serves.
const (
	PagePath  = "/"
	StatePath = "/state.json"
)

// Options of the Handler.
type Options struct {
	// AnyHost serves requests whatever their Host header. Without it, a
	// request must name a loopback address or localhost, so that a web
	// page elsewhere cannot read the dashboard through a name it points
	// at 127.0.0.1 (DNS rebinding). Set it for a dashboard served on
	// another address, which the user chose.
	AnyHost bool
}

// Handler serves the page and its data: GET / the page, GET /state.json
// the State's Snapshot (with an ETag of its version: a poll that finds
// nothing new is answered 304).
func Handler(s *State, o Options) http.Handler {
	tag := strconv.FormatInt(s.started.UnixNano(), 36)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !o.AnyHost && !loopbackHost(r.Host) {
			http.Error(w, "this dashboard answers on its loopback address only", http.StatusForbidden)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "read only", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		switch r.URL.Path {
		case PagePath:
			h.Set("Content-Type", "text/html; charset=utf-8")
			h.Set("Cache-Control", "no-store")
			h.Set("Content-Security-Policy", "default-src 'none'; connect-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:")
			_, _ = w.Write([]byte(page))
		case StatePath:
			snap := s.Snapshot()
			etag := fmt.Sprintf(`"%s-%d"`, tag, snap.Version)
			h.Set("Cache-Control", "no-cache")
			h.Set("ETag", etag)
			if r.Header.Get("If-None-Match") == etag {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			b, err := json.Marshal(snap)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			h.Set("Content-Type", "application/json")
			_, _ = w.Write(b)
		default:
			http.NotFound(w, r)
		}
	})
}

// loopbackHost tells whether a Host header names this machine's loopback:
// localhost, or an address in 127.0.0.0/8 or ::1.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Listen listens where --ui says: ADDR as host:port, where a missing host
// (":8089", or a bare port "8089") is 127.0.0.1, the loopback, and so is
// localhost. Another host is listened on as given. Loopback tells which.
func Listen(addr string) (ln net.Listener, loopback bool, err error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		if _, perr := strconv.ParseUint(addr, 10, 16); perr != nil {
			return nil, false, fmt.Errorf("%q: want HOST:PORT, :PORT or PORT", addr)
		}
		host, port = "", addr
	}
	if host == "" || strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	}
	ln, err = net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		return nil, false, err
	}
	ip := net.ParseIP(host)
	return ln, ip != nil && ip.IsLoopback(), nil
}
