package http1

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"loadgen/internal/allocs"
	"loadgen/internal/race"
	"loadgen/loadgen/protocol"
)

// A request mix: every request of the list is built once, the one picked
// is what Do sends (its method, path, headers — the Config's first — and
// body), and a HEAD's answer is read as one.
func TestMixPick(t *testing.T) {
	cs := startCanned(t, func(r *http.Request) (string, bool) {
		// A HEAD's answer says how long the body would be, and has none.
		return "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n" + map[bool]string{true: "", false: "hello"}[r.Method == "HEAD"], false
	})
	base := "http://" + cs.addr
	cfg := Config{URL: base + "/", Headers: []string{"X-All: 1"}, Requests: []Request{
		{URL: base + "/a?q=1", Headers: []string{"X-A: a"}},
		{Method: "HEAD", URL: base + "/b"},
		{Method: "POST", URL: base + "/c", Body: []byte("body"), Headers: []string{"Host: other"}},
	}}
	d, c := dial(t, cfg)
	picks := []int{0, 1, 2, 1, 0, 2}
	for _, i := range picks {
		c.Pick(i)
		o := c.Do(context.Background(), soon())
		if o.Err != protocol.None || o.Done || o.Written != int64(len(d.mix.reqs[i])) {
			t.Fatalf("request %d: %+v", i, o)
		}
	}
	if n := cs.requests(); n != len(picks) {
		t.Fatalf("the server saw %d requests on one connection, want %d", n, len(picks))
	}
	for k, i := range picks {
		r := cs.reqs[k]
		want := []string{"GET /a?q=1", "HEAD /b", "POST /c"}[i]
		if got := r.Method + " " + r.RequestURI; got != want {
			t.Errorf("request %d: %s, want %s", k, got, want)
		}
		if r.Header.Get("X-All") != "1" {
			t.Errorf("request %d: no X-All: the Config's headers go with every request", k)
		}
		if i == 0 && r.Header.Get("X-A") != "a" || i != 0 && r.Header.Get("X-A") != "" {
			t.Errorf("request %d: X-A %q", k, r.Header.Get("X-A"))
		}
		if i == 2 && (cs.bodys[k] != "body" || r.Host != "other") {
			t.Errorf("POST: body %q, host %q", cs.bodys[k], r.Host)
		}
	}

	// The loop's Session: the request picked, and its answer parsed as it
	// must be (a HEAD's without a body).
	s := d.Session().(*session)
	s.Pick(1)
	if !strings.HasPrefix(string(s.Request()), "HEAD /b HTTP/1.1\r\n") {
		t.Fatalf("session request %q", s.Request())
	}
	if o, done, _ := feed(s, []byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"), 0); !done || o.Err != protocol.None {
		t.Errorf("HEAD answer: done %v, %+v", done, o)
	}
	s.Pick(0)
	if o, done, _ := feed(s, []byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"), 0); !done || o.Err != protocol.None || o.Written != int64(len(d.mix.reqs[0])) {
		t.Errorf("GET answer: done %v, %+v", done, o)
	}
}

// The requests of a mix share the URL's scheme, host and port, and each
// is checked as a single request is.
func TestMixConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		reqs []Request
		want string
	}{
		{[]Request{{URL: "http://127.0.0.1:8081/"}}, "request 1: http://127.0.0.1:8081/ is not on http://127.0.0.1:8080: the requests of a mix share one connection pool"},
		{[]Request{{URL: "http://127.0.0.1:8080/"}, {URL: "https://127.0.0.1:8080/"}}, "request 2: https://127.0.0.1:8080/ is not on http://"},
		{[]Request{{URL: "http://u:p@127.0.0.1:8080/"}}, "request 1: URL \"http://u:p@127.0.0.1:8080/\": credentials"},
		{[]Request{{Method: "G T", URL: "http://127.0.0.1:8080/"}}, `request 1 (G T http://127.0.0.1:8080/): method "G T" is not a valid HTTP method`},
		{[]Request{{URL: "http://127.0.0.1:8080/", Headers: []string{"Content-Length: 3"}}}, `request 1 (`},
		{[]Request{{URL: "http://127.0.0.1:8080/%zz"}}, "request 1: malformed URL"},
	} {
		err := Config{URL: "http://127.0.0.1:8080/", Requests: tc.reqs}.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %s…", tc.reqs, err, tc.want)
		}
	}
	if err := (Config{URL: "http://LOCALHOST/", Requests: []Request{{URL: "http://localhost:80/x"}}}).Validate(); err != nil {
		t.Errorf("the default port written or not is one port: %v", err)
	}
}

// Picking allocates nothing: a Pick and a Do on an established connection
// cost what a Do costs.
func TestMixZeroAllocs(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation counts are measured without -race (make test)")
	}
	addr := startFixed(t, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
	base := "http://" + addr
	_, c := dial(t, Config{URL: base + "/", Requests: []Request{{URL: base + "/a"}, {URL: base + "/b", Headers: []string{"X: y"}}}})
	c.Do(context.Background(), soon())
	var bad protocol.Outcome
	i := 0
	n := allocs.Count(100, func() {
		c.Pick(i % 2)
		i++
		if o := c.Do(context.Background(), soon()); o.Err != protocol.None || o.Done {
			bad = o
		}
	})
	if bad != (protocol.Outcome{}) {
		t.Fatalf("a request failed: %+v", bad)
	}
	if n > allocs.Slack {
		t.Errorf("%d allocations in 100 Picks and Dos, want 0", n)
	}
}
