package loadgen

import (
	"runtime"
	"strings"
	"testing"
)

func TestLoopCannot(t *testing.T) {
	cfg := func(proto, client, netns string, newConn bool, streams int, mix *Mix) Config {
		var c Config
		c.Protocol, c.Client, c.NetNS, c.NewConn, c.Streams, c.Mix = proto, client, netns, newConn, streams, mix
		return c
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"client first", cfg("h2", "x/net/http2", "ns", true, 4, nil), "--client x/net/http2 (the reference library"},
		{"new-conn over TLS", cfg("https", "", "", true, 0, nil), "--new-conn over TLS ("},
		{"new-conn over h2c", cfg("h2c", "", "", true, 0, nil), "--new-conn over HTTP/2 ("},
		{"new-conn over gRPC", cfg("grpc", "", "ns", true, 0, nil), "--new-conn over gRPC ("},
		{"several hosts", cfg("http", "", "ns", false, 0, &Mix{Hosts: []int{0, 1}}), "a request mix on several hosts"},
		{"one-host mix", cfg("h2", "", "", false, 0, &Mix{}), "-p h2 with these options"},
		{"netns", cfg("h2", "", "ns", false, 8, nil), "-p h2 from --netns ("},
		{"streams", cfg("https", "", "", false, 8, nil), "8 streams per connection over -p https"},
		{"otherwise", cfg("h3", "", "", false, 1, nil), "-p h3 with these options"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := LoopCannot(tc.cfg)
			want := tc.want
			if runtime.GOOS != "linux" {
				want = "anything on " + runtime.GOOS
			}
			if !strings.HasPrefix(got, want) {
				t.Errorf("LoopCannot = %q, want it to start %q", got, want)
			}
		})
	}
}
