package client

import (
	"slices"
	"strings"
	"testing"

	"loadgen/loadgen/protocol"
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
		{Spec{Method: "PUT", Requests: reqs}, "--targets gives each request its method and body: leave out -m, --body and --body-file"},
		{Spec{Body: []byte("x"), Requests: reqs}, "--targets gives each request its method and body: leave out -m, --body and --body-file"},
		{Spec{Protocol: "h2", Requests: []Request{{Method: "GET", URL: "https://127.0.0.1:8443/"}, {Method: "GET", URL: "http://127.0.0.2:8080/"}}}, "host http://127.0.0.2:8080: -p h2 is HTTP/2 over TLS"},
		{Spec{Target: "http://127.0.0.3:80", Requests: []Request{{Method: "GET", URL: "http://127.0.0.1:8080/"}, {Method: "GET", URL: "http://127.0.0.2:8080/"}}}, "goes to 2 hosts: leave out the URL"},
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

// A mix on several origins is a Dialer per origin, each with its own
// requests: TLS on the https:// one only; the Spec records every origin.
func TestSpecMixHosts(t *testing.T) {
	s := Spec{Requests: []Request{
		{Method: "GET", URL: "http://127.0.0.1:8080/a"},
		{Method: "GET", URL: "https://LOCALHOST/b"},
		{Method: "GET", URL: "http://127.0.0.1:8080/c?x={{seq}}"},
	}}
	d, err := New(&s)
	if err != nil {
		t.Fatal(err)
	}
	hd, ok := d.(protocol.HostDialer)
	if !ok || hd.Hosts() != 2 {
		t.Fatalf("dialer %T, want a HostDialer of 2 hosts", d)
	}
	if hd.Origin(0) != "http://127.0.0.1:8080" || hd.Origin(1) != "https://localhost:443" {
		t.Errorf("origins %q, %q", hd.Origin(0), hd.Origin(1))
	}
	if s.Target != "http://127.0.0.1:8080 https://localhost:443" || len(s.Requests) != 3 || !s.TLS.Enabled {
		t.Errorf("target %q, %d requests, TLS %v; want both hosts, 3, TLS", s.Target, len(s.Requests), s.TLS.Enabled)
	}
	for h, tls := range []bool{false, true} {
		if _, ok := hd.Host(h).(*http1.Dialer); !ok {
			t.Fatalf("host %d: %T", h, hd.Host(h))
		}
		if got := !hd.Host(h).(*http1.Dialer).Sessions(); got != tls {
			t.Errorf("host %d: TLS %v, want %v", h, got, tls)
		}
	}
}

// A mix's hosts are the engine's Mix.Hosts: set only for several origins,
// numbered as New's HostDialer numbers them, with a connection or more
// for each.
func TestSpecMixHostsOf(t *testing.T) {
	get := func(urls ...string) []Request {
		var out []Request
		for _, u := range urls {
			out = append(out, Request{Method: "GET", URL: u})
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		reqs  []Request
		conns int
		want  []int
		err   string
	}{
		{"no mix", nil, 1, nil, ""},
		{"one origin: no hosts", get("http://127.0.0.1:8080/a", "http://127.0.0.1:8080/b"), 1, nil, ""},
		{"one origin, the port written or not", get("http://127.0.0.1/a", "HTTP://127.0.0.1:80/b"), 1, nil, ""},
		{"two origins, in order of appearance", get("http://127.0.0.2:8080/a", "https://LOCALHOST/b", "http://127.0.0.2:8080/c?x={{seq}}"), 2,
			[]int{0, 1, 0}, ""},
		{"a connection per host", get("http://127.0.0.1:8080/a", "http://127.0.0.2:8080/b", "http://127.0.0.3:8080/c"), 2,
			nil, "goes to 3 hosts, a connection or more each: give at least -c 3"},
	} {
		s := Spec{Requests: tc.reqs}
		got, err := s.MixHosts(tc.conns)
		if (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: hosts %v, want %v", tc.name, got, tc.want)
		}
		if tc.err != "" || got == nil {
			continue
		}
		// As New's HostDialer numbers them.
		d, err := New(&s)
		if err != nil {
			t.Fatal(err)
		}
		hd := d.(protocol.HostDialer)
		for i, r := range tc.reqs {
			if o := hd.Origin(got[i]); o != origin(r.URL) {
				t.Errorf("%s: request %d (%s) on host %d, %s", tc.name, i, r.URL, got[i], o)
			}
		}
	}
}
