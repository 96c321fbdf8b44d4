package h2

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"loadgen/loadgen/protocol"
)

// A request mix over HTTP/2: the request picked is what a stream sends —
// its method, path, headers (the Config's first) and body — on one
// connection, whichever goes first and in whatever order.
func TestMixPick(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := h2cServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.RequestURI()+" all="+r.Header.Get("X-All")+" own="+r.Header.Get("X-Own")+" host="+r.Host+" body="+string(b))
		mu.Unlock()
		w.Write([]byte("hello"))
	}), false, true)
	host := strings.TrimPrefix(srv.URL, "http://")
	d, err := NewDialer(Config{URL: srv.URL + "/", Cleartext: true, Headers: []string{"X-All: 1"}, Requests: []Request{
		{URL: srv.URL + "/a?q=1", Headers: []string{"X-Own: a"}},
		{Method: "HEAD", URL: srv.URL + "/b"},
		{Method: "POST", URL: srv.URL + "/c", Body: []byte("body"), Headers: []string{"Host: other"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	picks := []int{2, 0, 1, 0, 2, 1}
	for _, i := range picks {
		c.(protocol.Picker).Pick(i)
		if o := c.Do(context.Background(), time.Now().Add(5*time.Second)); o.Err != protocol.None || o.Status != 200 {
			t.Fatalf("request %d: %+v", i, o)
		}
	}
	want := []string{
		"GET /a?q=1 all=1 own=a host=" + host + " body=",
		"HEAD /b all=1 own= host=" + host + " body=",
		"POST /c all=1 own= host=other body=body",
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != len(picks) {
		t.Fatalf("the server saw %d requests, want %d", len(seen), len(picks))
	}
	for k, i := range picks {
		if seen[k] != want[i] {
			t.Errorf("request %d:\n got %s\nwant %s", k, seen[k], want[i])
		}
	}
	if n := d.Opened(); n != 1 {
		t.Errorf("%d connections, want 1", n)
	}
}

// The requests of a mix share the URL's scheme, host and port; the
// reference client takes none.
func TestMixConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		reqs []Request
		want string
	}{
		{[]Request{{URL: "http://127.0.0.1:8081/"}}, "http2: request 1: http://127.0.0.1:8081/ is not on http://127.0.0.1:8080: the requests of a mix share one connection pool"},
		{[]Request{{URL: "http://127.0.0.1:8080/"}, {URL: "https://127.0.0.1:8080/"}}, "http2: request 2: https://127.0.0.1:8080/ is not on"},
		{[]Request{{Method: "CONNECT", URL: "http://127.0.0.1:8080/"}}, "http2: request 1 (CONNECT http://127.0.0.1:8080/): CONNECT is not supported"},
		{[]Request{{URL: "http://u:p@127.0.0.1:8080/"}}, `http2: request 1: URL "http://u:p@127.0.0.1:8080/": credentials`},
	} {
		err := Config{URL: "http://127.0.0.1:8080/", Cleartext: true, Requests: tc.reqs}.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %s…", tc.reqs, err, tc.want)
		}
	}
	_, err := NewLibraryDialer(Config{URL: "http://127.0.0.1:8080/", Cleartext: true, Requests: []Request{{URL: "http://127.0.0.1:8080/"}}})
	if err == nil || !strings.Contains(err.Error(), "x-net") {
		t.Errorf("the reference client with a mix: %v", err)
	}
}
