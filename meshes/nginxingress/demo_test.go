package nginxingress

import (
	"strconv"
	"strings"
	"testing"
)

// The demo's nginx is one worker on a free loopback port in front of the
// upstream given, a config Start takes; its note says what ran.
func TestDemoConfig(t *testing.T) {
	c := demoConfig("127.0.0.1:8080")
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Listen != "127.0.0.1:0" || c.Upstream != "127.0.0.1:8080" || c.Workers != 1 || c.TLS != nil {
		t.Errorf("demo config %+v: want one plaintext worker on 127.0.0.1:0 in front of 127.0.0.1:8080", c)
	}
}

func TestDemoNote(t *testing.T) {
	for _, tc := range []struct {
		pid   int
		nginx bool
		want  string
	}{
		{4242, true, "The nginx path is a real nginx (1 worker, generated config) proxying to the same httpbin; proxy cpu is nginx's master and worker, target cpu is httpbin's (4242)."},
		{4242, false, "nginx is not installed, so the demo swept the baseline path only (apt-get install nginx adds the nginx path)."},
	} {
		if got := DemoNote(tc.pid, tc.nginx); got != tc.want {
			t.Errorf("DemoNote(%d, %v) =\n%s\nwant\n%s", tc.pid, tc.nginx, got, tc.want)
		}
	}
	// The note's worker count is the config's.
	if w := demoConfig("x:1").Workers; !strings.Contains(DemoNote(1, true), "("+strconv.Itoa(w)+" worker,") {
		t.Errorf("DemoNote does not say the demo's %d worker(s)", w)
	}
}
