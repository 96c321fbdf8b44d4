package client

import (
	"strings"
	"testing"

	"loadgen/loadgen/protocol/h2"
	"loadgen/loadgen/protocol/http1"
)

// A request mix goes over HTTP with loadgen's clients; its target is the
// origin its requests share.
func TestSpecMix(t *testing.T) {
	reqs := []Request{{Method: "GET", URL: "http://127.0.0.1:8080/get"}, {Method: "POST", URL: "http://127.0.0.1:8080/post", Body: []byte("x")}}
	for _, tc := range []struct {
		s    Spec
		want string
	}{
		{Spec{Protocol: "grpc", Requests: reqs}, "a request mix (--targets) is of HTTP requests: use -p http1, h2 or h2c, not -p grpc"},
		{Spec{Protocol: "tcp-rr", Requests: reqs}, "not -p tcp-rr"},
		{Spec{Protocol: "h2c", Client: "x-net", Requests: reqs}, "--client x-net sends one request"},
		{Spec{Method: "PUT", Requests: reqs}, "leave out -m and --body"},
		{Spec{Body: []byte("x"), Requests: reqs}, "leave out -m and --body"},
		{Spec{Requests: []Request{{Method: "GET", URL: "http://127.0.0.1:8080/"}, {Method: "GET", URL: "http://127.0.0.1:9090/"}}}, "request 2: http://127.0.0.1:9090/ is not on"},
	} {
		s := tc.s
		if _, err := New(&s); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v, want one saying %q", tc.s, err, tc.want)
		}
	}
	s := Spec{Requests: reqs, Headers: []string{"X: 1"}}
	d, err := New(&s)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.(*http1.Dialer); !ok || s.Target != "http://127.0.0.1:8080" || s.Method != "" {
		t.Errorf("dialer %T, target %q, method %q", d, s.Target, s.Method)
	}
	s = Spec{Protocol: "h2c", Requests: reqs}
	if d, err = New(&s); err != nil {
		t.Fatal(err)
	}
	if _, ok := d.(*h2.Dialer); !ok {
		t.Errorf("dialer %T", d)
	}
}
