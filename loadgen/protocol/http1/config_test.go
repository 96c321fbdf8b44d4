package http1

import (
	"strings"
	"testing"

	"loadgen/loadgen/protocol"
)

func TestValidate(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		err  string // a substring of the error; "" for valid
	}{
		{"plain", Config{URL: "http://127.0.0.1:8080/x"}, ""},
		{"https", Config{URL: "https://localhost/"}, ""},
		{"ipv6", Config{URL: "http://[::1]:8080/"}, ""},
		{"headers", Config{URL: "http://h/", Headers: []string{"X-A: 1", "Host: other", "Content-Length: 2"}, Body: []byte("ab")}, ""},
		{"empty", Config{}, "no URL"},
		{"malformed", Config{URL: "http://127.0.0.1:80:80/"}, "malformed URL"},
		{"no scheme", Config{URL: "//127.0.0.1/"}, "no scheme"},
		{"host:port without scheme", Config{URL: "localhost:8080"}, "want http://localhost:8080"},
		{"ip:port/path without scheme", Config{URL: "127.0.0.1:8080/x"}, "no scheme"},
		{"empty scheme", Config{URL: "://h/"}, "malformed URL"},
		{"ftp", Config{URL: "ftp://127.0.0.1/"}, `scheme "ftp"`},
		{"h2c", Config{URL: "h2c://127.0.0.1/"}, "use http:// or https://"},
		{"no host", Config{URL: "http:///path"}, "no host"},
		{"userinfo", Config{URL: "http://u:p@127.0.0.1/"}, "Authorization"},
		{"port range", Config{URL: "http://127.0.0.1:70000/"}, "out of range"},
		{"TLS options on http", Config{URL: "http://127.0.0.1/", TLS: protocol.TLS{Insecure: true}}, "use --tls/https"},
		{"bad method", Config{URL: "http://h/", Method: "GET /"}, "not a valid HTTP method"},
		{"header without colon", Config{URL: "http://h/", Headers: []string{"X-A 1"}}, `want "Name: value"`},
		{"header empty name", Config{URL: "http://h/", Headers: []string{": v"}}, "not a valid header name"},
		{"header name with space", Config{URL: "http://h/", Headers: []string{"X A: v"}}, "not a valid header name"},
		{"header CRLF", Config{URL: "http://h/", Headers: []string{"X-A: 1\r\nX-B: 2"}}, "control character"},
		{"empty Host", Config{URL: "http://h/", Headers: []string{"Host:"}}, "empty Host"},
		{"Content-Length mismatch", Config{URL: "http://h/", Headers: []string{"Content-Length: 5"}}, "disagrees with the body"},
		{"Transfer-Encoding", Config{URL: "http://h/", Headers: []string{"Transfer-Encoding: chunked"}}, "Transfer-Encoding"},
		{"CA file missing", Config{URL: "https://h/", TLS: protocol.TLS{CAFile: "/nonexistent/ca.pem"}}, "--cacert"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if err == nil {
				_, err = NewDialer(tc.cfg) // NewDialer also loads the CA file
			}
			switch {
			case tc.err == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tc.err != "" && err == nil:
				t.Errorf("no error, want one containing %q", tc.err)
			case tc.err != "" && !strings.Contains(err.Error(), tc.err):
				t.Errorf("error %q does not contain %q", err, tc.err)
			}
		})
	}
}

func TestRequestBytes(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"GET", Config{URL: "http://127.0.0.1:8080"},
			"GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: loadgen\r\n\r\n"},
		{"default port, query", Config{URL: "https://example.test/a%20b?q=1#frag"},
			"GET /a%20b?q=1 HTTP/1.1\r\nHost: example.test\r\nUser-Agent: loadgen\r\n\r\n"},
		{"ipv6", Config{URL: "http://[::1]:81/"},
			"GET / HTTP/1.1\r\nHost: [::1]:81\r\nUser-Agent: loadgen\r\n\r\n"},
		{"POST with body and headers", Config{URL: "http://h/p", Method: "POST", Body: []byte("abc"),
			Headers: []string{"Host: v.test", "X-A:  1 ", "user-agent: me", "Content-Length: 3"}},
			"POST /p HTTP/1.1\r\nHost: v.test\r\nX-A: 1\r\nuser-agent: me\r\nContent-Length: 3\r\n\r\nabc"},
		{"POST without body", Config{URL: "http://h/", Method: "POST"},
			"POST / HTTP/1.1\r\nHost: h\r\nUser-Agent: loadgen\r\nContent-Length: 0\r\n\r\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tg, err := tc.cfg.target()
			if err != nil {
				t.Fatal(err)
			}
			if string(tg.req) != tc.want {
				t.Errorf("request\n%q\nwant\n%q", tg.req, tc.want)
			}
		})
	}
}

func TestDialAddress(t *testing.T) {
	for url, addr := range map[string]string{
		"http://127.0.0.1/":      "127.0.0.1:80",
		"https://localhost/":     "localhost:443",
		"http://[::1]:8443/":     "[::1]:8443",
		"https://127.0.0.1:9/x":  "127.0.0.1:9",
		"http://LOCALHOST:80/x?": "LOCALHOST:80",
	} {
		d, err := NewDialer(Config{URL: url})
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		if d.addr != addr {
			t.Errorf("%s: dials %s, want %s", url, d.addr, addr)
		}
	}
}
