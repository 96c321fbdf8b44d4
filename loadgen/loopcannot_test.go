package loadgen

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"loadgen/loadgen/protocol"
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

// plainDialer is a Dialer no event loop can drive.
type plainDialer struct{}

func (plainDialer) Dial(context.Context) (protocol.Conn, error) { return nil, errors.New("not dialed") }

// sessionsDialer is a SessionDialer a loop drives: Sessions true, the
// rest unused by the choice of a driver.
type sessionsDialer struct{ protocol.SessionDialer }

func (sessionsDialer) Sessions() bool { return true }

// --driver loop for what the loop cannot drive is refused by the engine
// in one wording, naming what (LoopCannot): the one loadgen run prints
// before its header (CheckDriver) and Run refuses with. Before, Run's
// said "… runs on goroutines (leave out --driver loop)" and the CLI's
// another.
func TestCheckDriver(t *testing.T) {
	hosts, err := protocol.NewHosts([]string{"http://a:1", "http://b:1"}, []protocol.Dialer{plainDialer{}, plainDialer{}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := func(driver, proto string, mix *Mix) Config {
		var c Config
		c.Driver, c.Protocol, c.Mix = driver, proto, mix
		c.Connections, c.Threads, c.Requests = 2, 1, 1
		return c
	}
	const tail = ": use --driver goroutines, or leave out --driver to take the loop where it can"
	for _, tc := range []struct {
		name string
		cfg  Config
		d    protocol.Dialer
		want string // "" for no refusal
	}{
		{"loop, a protocol it cannot drive", cfg(DriverLoop, "h3", nil), plainDialer{}, "--driver loop cannot drive -p h3 with these options" + tail},
		{"loop, several hosts", cfg(DriverLoop, "http", &Mix{Hosts: []int{0, 1}}), hosts, "--driver loop cannot drive a request mix on several hosts (a loop drives one host)" + tail},
		{"loop, several hosts cfg does not say", cfg(DriverLoop, "http", nil), hosts, "--driver loop cannot drive a request mix on 2 hosts (a loop drives one host)" + tail},
		{"loop, one it drives", cfg(DriverLoop, "http", nil), sessionsDialer{}, ""},
		{"default, a protocol it cannot drive", cfg(DriverAuto, "h3", nil), plainDialer{}, ""},
		{"goroutines", cfg(DriverGoroutines, "http", nil), sessionsDialer{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.want
			if runtime.GOOS != "linux" && tc.cfg.Driver == DriverLoop && tc.d == (sessionsDialer{}) {
				want = "--driver loop cannot drive anything on " + runtime.GOOS + " (it needs Linux's epoll)" + tail
			}
			err := CheckDriver(tc.cfg, tc.d)
			if got := fmt.Sprint(err); want == "" && err != nil || want != "" && got != want {
				t.Errorf("CheckDriver = %v, want %q", err, want)
			}
			if want != "" {
				if _, rerr := Run(context.Background(), tc.cfg, tc.d); fmt.Sprint(rerr) != want {
					t.Errorf("Run's refusal %v, want CheckDriver's %q", rerr, want)
				}
			}
		})
	}
}
