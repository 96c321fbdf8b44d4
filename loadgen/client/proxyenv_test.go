package client

import "testing"

func TestProxyEnv(t *testing.T) {
	for _, tc := range []struct {
		name, protocol string
		targets        []string
		env            map[string]string
		want           string // name host port, or "" for none
	}{
		{"http", "http", []string{"http://example.test/"}, map[string]string{"HTTP_PROXY": "p"}, "HTTP_PROXY example.test 80"},
		{"lower case", "http", []string{"http://example.test:8080/"}, map[string]string{"http_proxy": "p"}, "http_proxy example.test 8080"},
		{"upper case first", "http", []string{"http://a.test/"}, map[string]string{"HTTP_PROXY": "p", "http_proxy": "p"}, "HTTP_PROXY a.test 80"},
		{"https not http", "https", []string{"https://a.test/"}, map[string]string{"HTTP_PROXY": "p"}, ""},
		{"https", "https", []string{"https://a.test/"}, map[string]string{"HTTPS_PROXY": "p"}, "HTTPS_PROXY a.test 443"},
		{"grpc reads HTTPS_PROXY", "grpc", []string{"127.0.0.1:50051"}, map[string]string{"HTTPS_PROXY": "p"}, "HTTPS_PROXY 127.0.0.1 50051"},
		{"tcp has none", "tcp-rr", []string{"127.0.0.1:9"}, map[string]string{"HTTPS_PROXY": "p", "HTTP_PROXY": "p"}, ""},
		{"loopback still proxied", "http", []string{"http://127.0.0.1:8080/"}, map[string]string{"HTTP_PROXY": "p"}, "HTTP_PROXY 127.0.0.1 8080"},
		{"exempt", "http", []string{"http://a.test/"}, map[string]string{"HTTP_PROXY": "p", "NO_PROXY": "a.test"}, ""},
		{"lower no_proxy", "http", []string{"http://a.test/"}, map[string]string{"HTTP_PROXY": "p", "no_proxy": "a.test"}, ""},
		{"first not exempt", "http", []string{"http://a.test/", "http://b.test:81/"}, map[string]string{"HTTP_PROXY": "p", "NO_PROXY": "a.test"}, "HTTP_PROXY b.test 81"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name, host, port := ProxyEnv(tc.protocol, tc.targets, func(k string) string { return tc.env[k] })
			got := ""
			if name != "" {
				got = name + " " + host + " " + port
			}
			if got != tc.want {
				t.Errorf("ProxyEnv = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNoProxy(t *testing.T) {
	for _, tc := range []struct {
		list, host, port string
		want             bool
	}{
		{"*", "a.test", "80", true},
		{"", "a.test", "80", false},
		{"a.test", "A.Test.", "80", true},
		{"a.test", "www.a.test", "80", true},
		{".a.test", "www.a.test", "80", true},
		{"a.test", "ba.test", "80", false},
		{"a.test:81", "a.test", "80", false},
		{"a.test:80", "a.test", "80", true},
		{"10.0.0.0/8", "10.1.2.3", "80", true},
		{"10.0.0.0/8", "11.1.2.3", "80", false},
		{"10.0.0.0/8", "ten.test", "80", false},
		{"127.0.0.1", "127.0.0.1", "80", true},
		{"127.0.0.1", "127.0.0.2", "80", false},
		{"[::1]:8080", "::1", "8080", true},
		{"::1", "::1", "80", true},
		{" x.test , a.test ", "a.test", "80", true},
	} {
		if got := NoProxy(tc.list, tc.host, tc.port); got != tc.want {
			t.Errorf("NoProxy(%q, %q, %q) = %v, want %v", tc.list, tc.host, tc.port, got, tc.want)
		}
	}
}
