package nginxingress

import (
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	ok := Config{Listen: "127.0.0.1:8080", Upstream: "127.0.0.1:8081"}
	with := func(f func(*Config)) Config {
		c := ok
		f(&c)
		return c
	}
	tests := []struct {
		name string
		cfg  Config
		want string // substring of the error; empty: valid
	}{
		{"minimal", ok, ""},
		{"port 0", with(func(c *Config) { c.Listen = "127.0.0.1:0" }), ""},
		{"ipv6", with(func(c *Config) { c.Listen, c.Upstream = "[::1]:8080", "[::1]:8081" }), ""},
		{"upstream name", with(func(c *Config) { c.Upstream = "httpbin.loadgen.svc.cluster.local:8000" }), ""},
		{"workers auto", with(func(c *Config) { c.Workers = WorkersAuto }), ""},
		{"sizing", with(func(c *Config) { c.Workers, c.CPUAffinity = 36, []int{0, 1, 35} }), ""},
		{"keepalive off", with(func(c *Config) { c.UpstreamKeepalive = -1 }), ""},
		{"tls", with(func(c *Config) { c.TLS = &TLSFiles{Cert: "/etc/x/tls.crt", Key: "my dir/tls.key"} }), ""},

		{"no listen", with(func(c *Config) { c.Listen = "" }), "listen address is empty"},
		{"listen no port", with(func(c *Config) { c.Listen = "127.0.0.1" }), "want IP:PORT"},
		{"listen name", with(func(c *Config) { c.Listen = "localhost:80" }), "not an IP address"},
		{"listen port", with(func(c *Config) { c.Listen = "127.0.0.1:65536" }), "port \"65536\""},
		{"listen semicolon", with(func(c *Config) { c.Listen = "127.0.0.1:80; include /etc/passwd" }), "character ';'"},
		{"listen space", with(func(c *Config) { c.Listen = "127.0.0.1:80 ssl" }), "character ' '"},
		{"listen newline", with(func(c *Config) { c.Listen = "127.0.0.1:80\nuser root" }), `character '\n'`},
		{"listen brace", with(func(c *Config) { c.Listen = "127.0.0.1:80{" }), "character '{'"},
		{"no upstream", with(func(c *Config) { c.Upstream = "" }), "upstream is empty"},
		{"upstream no port", with(func(c *Config) { c.Upstream = "127.0.0.1" }), "want HOST:PORT"},
		{"upstream port 0", with(func(c *Config) { c.Upstream = "127.0.0.1:0" }), "from 1 to 65535"},
		{"upstream brace", with(func(c *Config) { c.Upstream = "a:80;}server{listen 1" }), "character ';'"},
		{"upstream variable", with(func(c *Config) { c.Upstream = "$host:80" }), "character '$'"},
		{"upstream tab", with(func(c *Config) { c.Upstream = "a\tb:80" }), `character '\t'`},
		{"upstream unicode", with(func(c *Config) { c.Upstream = "bücher.example:80" }), "character 'ü'"},
		{"upstream bad label", with(func(c *Config) { c.Upstream = "-a..b:80" }), "neither an IP address nor a host name"},
		{"upstream unix", with(func(c *Config) { c.Upstream = "unix:/tmp/s" }), "character '/'"},
		{"upstream two colons", with(func(c *Config) { c.Upstream = "a:b:80" }), "want HOST:PORT"},
		{"workers", with(func(c *Config) { c.Workers = -2 }), "workers must be"},
		{"too many workers", with(func(c *Config) { c.Workers = 100000 }), "workers must be"},
		{"cpu negative", with(func(c *Config) { c.CPUAffinity = []int{0, -1} }), "CPU -1 is out of range"},
		{"cpu too big", with(func(c *Config) { c.CPUAffinity = []int{1024} }), "CPU 1024 is out of range"},
		{"tls no cert", with(func(c *Config) { c.TLS = &TLSFiles{Key: "k.pem"} }), "tls cert path is empty"},
		{"tls no key", with(func(c *Config) { c.TLS = &TLSFiles{Cert: "c.pem"} }), "tls key path is empty"},
		{"tls quote", with(func(c *Config) { c.TLS = &TLSFiles{Cert: `c.pem"; user root; #`, Key: "k.pem"} }), `character '"'`},
		{"tls variable", with(func(c *Config) { c.TLS = &TLSFiles{Cert: "c.pem", Key: "$ssl_server_name.key"} }), "character '$'"},
		{"tls newline", with(func(c *Config) { c.TLS = &TLSFiles{Cert: "c.pem", Key: "k.pem\n"} }), `character '\n'`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.want != "" && err == nil:
				t.Fatalf("Validate() = nil, want an error with %q", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Fatalf("Validate() = %v, want an error with %q", err, tt.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Fatalf("Validate() error is not one line: %q", err)
			}
		})
	}
}
