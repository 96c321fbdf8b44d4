package udp

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"loadgen/targets/udpecho"
)

func TestValidate(t *testing.T) {
	ok := Config{Addr: "127.0.0.1:7001", Mode: RR, Size: 1}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string // in the error; "" means valid
	}{
		{"smallest", func(*Config) {}, ""},
		{"largest", func(c *Config) { c.Size = MaxSize }, ""},
		{"above a datagram", func(c *Config) { c.Size = MaxSize + 1 }, "1 to 65507"},
		{"empty", func(c *Config) { c.Size = 0 }, "out of range"},
		{"no mode", func(c *Config) { c.Mode = "" }, "no mode"},
		{"tcp mode", func(c *Config) { c.Mode = "tcp-rr" }, "unknown mode"},
		{"no port", func(c *Config) { c.Addr = "127.0.0.1" }, "want host:port"},
		{"port 0", func(c *Config) { c.Addr = "127.0.0.1:0" }, "port must be"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			err := c.Validate()
			switch {
			case tc.want == "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n")):
				t.Fatalf("error %v, want one line with %q", err, tc.want)
			}
		})
	}
}

// The control exchange is the target's, spelled twice because a protocol
// does not import targets.
func TestControlIsTheTargets(t *testing.T) {
	for _, p := range [][2]string{
		{control, udpecho.Control}, {controlOpen, udpecho.Open}, {controlOK, udpecho.OK},
		{controlCount, udpecho.Count}, {controlClose, udpecho.Close}, {controlPing, udpecho.Ping},
	} {
		if p[0] != p[1] {
			t.Errorf("client says %q, target %q", p[0], p[1])
		}
	}
	if strings.HasPrefix(string(fill(64)), control[:1]) {
		t.Error("the payload starts as a control datagram does")
	}
}

// Dial fails, in one line, where nothing answers: udp-rr's probe and
// udp-stream's opening of the sink get no answer from a socket that reads
// and never writes.
func TestDialNoAnswer(t *testing.T) {
	mute, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	for _, m := range []Mode{RR, Stream} {
		d, err := NewDialer(Config{Addr: mute.LocalAddr().String(), Mode: m, Size: 10, DialTimeout: 300 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Dial(context.Background()); err == nil || !strings.Contains(err.Error(), "no answer") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: dial to a mute socket: %v", m, err)
		}
	}
}

// A sink that is gone when the connection closes never tells its count:
// what was sent on that connection is unknown, neither received nor lost.
func TestStreamCountNeverCame(t *testing.T) {
	srv, err := udpecho.New(udpecho.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	d, err := NewDialer(Config{Addr: srv.Addr(), Mode: Stream, Size: 100, DialTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c, err := d.Dial(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if o := c.Do(ctx, time.Time{}); o.Err != 0 {
			t.Fatalf("Do: %+v", o)
		}
	}
	srv.Close()
	c.Close()
	g, ok := d.Datagrams(ctx)
	if !ok || g.Sent != 10 || g.Unknown != 10 || g.Received != 0 || g.Lost() != 0 {
		t.Errorf("datagrams %+v, want 10 sent, 10 unknown", g)
	}
}
