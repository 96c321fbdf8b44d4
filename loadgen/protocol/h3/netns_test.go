package h3

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"testing"
	"time"

	"loadgen/loadgen/protocol"
	"loadgen/loadgen/protocol/netns"
)

// From inside a network namespace (--netns): the Dialer wrapped by
// netns.Wrap makes its UDP sockets there, and reaches an HTTP/3 server on
// the namespace's own loopback, which the test's namespace cannot.
func TestDialFromNamespace(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("CI must run the tests as root: network namespaces need it")
		}
		t.Skip("network namespaces need root")
	}
	name := fmt.Sprintf("lgt%dh3", os.Getpid()) // lgt<pid>…: what loadgen lab --cleanup removes once this process is gone
	for _, args := range [][]string{{"netns", "add", name}, {"-n", name, "link", "set", "lo", "up"}} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	ns, err := netns.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	var s *server
	if err := ns.Do(func() error {
		s = startServer(t, http.HandlerFunc(echo)) // its UDP socket in the namespace
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	inner, err := NewDialer(Config{URL: s.url + "/get", TLS: protocol.TLS{Insecure: true}, DialTimeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := inner.Dial(context.Background()); err == nil {
		c.Close()
		t.Fatalf("reached %s from the test's own namespace: the server is not in %s", s.url, name)
	}
	d := netns.Wrap(ns, inner)
	defer d.(interface{ Close() error }).Close()
	c, err := d.Dial(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 3 {
		if o := c.Do(context.Background(), time.Now().Add(5*time.Second)); o.Err != protocol.None || o.Status != 200 {
			t.Fatalf("%+v", o)
		}
	}
	if s.conns.Load() != 1 || d.(protocol.ConnCounter).Opened() != 1 {
		t.Errorf("the server accepted %d connections, the Dialer opened %d; want 1", s.conns.Load(), d.(protocol.ConnCounter).Opened())
	}
}
