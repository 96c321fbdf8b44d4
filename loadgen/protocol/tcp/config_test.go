package tcp_test

import (
	"strings"
	"testing"

	"loadgen/loadgen/protocol/tcp"
	"loadgen/targets/tcpecho"
)

func TestValidate(t *testing.T) {
	ok := tcp.Config{Addr: "127.0.0.1:7000", Mode: tcp.RR, Size: tcp.DefaultSize}
	tests := []struct {
		name   string
		change func(*tcp.Config)
		want   string // a piece of the error; "" for none
	}{
		{"ok", func(*tcp.Config) {}, ""},
		{"ipv6", func(c *tcp.Config) { c.Addr = "[::1]:7000" }, ""},
		{"max size", func(c *tcp.Config) { c.Size = tcp.MaxSize }, ""},
		{"one byte", func(c *tcp.Config) { c.Size = 1 }, ""},
		{"crr", func(c *tcp.Config) { c.Mode = tcp.CRR }, ""},
		{"stream", func(c *tcp.Config) { c.Mode = tcp.Stream }, ""},
		{"size 0", func(c *tcp.Config) { c.Size = 0 }, "size 0"},
		{"negative size", func(c *tcp.Config) { c.Size = -1 }, "size -1"},
		{"size over cap", func(c *tcp.Config) { c.Size = tcp.MaxSize + 1 }, "64 MiB"},
		{"no port", func(c *tcp.Config) { c.Addr = "127.0.0.1" }, "host:port"},
		{"empty address", func(c *tcp.Config) { c.Addr = "" }, "host:port"},
		{"no host", func(c *tcp.Config) { c.Addr = ":7000" }, "no host"},
		{"port 0", func(c *tcp.Config) { c.Addr = "127.0.0.1:0" }, "port"},
		{"named port", func(c *tcp.Config) { c.Addr = "127.0.0.1:echo" }, "port"},
		{"port too big", func(c *tcp.Config) { c.Addr = "127.0.0.1:65536" }, "port"},
		{"unknown mode", func(c *tcp.Config) { c.Mode = "udp-rr" }, `unknown mode "udp-rr"`},
		{"no mode", func(c *tcp.Config) { c.Mode = "" }, "no mode"},
		{"negative dial timeout", func(c *tcp.Config) { c.DialTimeout = -1 }, "dial timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := ok
			tt.change(&c)
			err := c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.want != "" && err == nil:
				t.Fatalf("Validate() = nil, want an error about %q", tt.want)
			case err != nil && (!strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n")):
				t.Fatalf("Validate() = %q, want one line containing %q", err, tt.want)
			}
			if _, derr := tcp.NewDialer(c); (derr == nil) != (err == nil) {
				t.Fatalf("NewDialer error %v disagrees with Validate %v", derr, err)
			}
		})
	}
}

func TestParseMode(t *testing.T) {
	tests := []struct {
		in   string
		want tcp.Mode
	}{
		{"tcp-rr", tcp.RR},
		{"rr", tcp.RR},
		{"TCP_RR", tcp.RR},
		{"tcp-crr", tcp.CRR},
		{"TCP_CRR", tcp.CRR},
		{"stream", tcp.Stream},
		{"TCP_STREAM", tcp.Stream},
	}
	for _, tt := range tests {
		got, err := tcp.ParseMode(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("ParseMode(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "udp-rr", "TCP_MAERTS", "tcp-"} {
		if got, err := tcp.ParseMode(bad); err == nil {
			t.Errorf("ParseMode(%q) = %q, want an error", bad, got)
		}
	}
}

// The protocol cannot import the target, so the magic is written twice.
func TestSinkMagicMatchesTarget(t *testing.T) {
	if tcp.SinkMagic != tcpecho.SinkMagic {
		t.Fatalf("tcp.SinkMagic %q != tcpecho.SinkMagic %q", tcp.SinkMagic, tcpecho.SinkMagic)
	}
}
