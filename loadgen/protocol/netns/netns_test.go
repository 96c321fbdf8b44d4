package netns

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"loadgen/loadgen/protocol"
)

// newNamespace makes a throwaway network namespace with its loopback up.
func newNamespace(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("CI must run the tests as root: network namespaces need it")
		}
		t.Skip("network namespaces need root")
	}
	name := fmt.Sprintf("lgt%dns", os.Getpid()) // lgt<pid>…: what loadgen lab --cleanup removes once this process is gone
	for _, args := range [][]string{{"netns", "add", name}, {"-n", name, "link", "set", "lo", "up"}} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", name).Run() })
	return name
}

type tcpDialer struct{ addr string }

type tcpConn struct{ net.Conn }

func (c tcpConn) Do(context.Context, time.Time) protocol.Outcome { return protocol.Outcome{} }

func (d tcpDialer) Dial(ctx context.Context) (protocol.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", d.addr)
	if err != nil {
		return nil, err
	}
	return tcpConn{c}, nil
}

// A listener on the namespace's own loopback is reached through the
// wrapper and only through it: the sockets really live in the namespace.
func TestDialInsideNamespace(t *testing.T) {
	ns := newNamespace(t)
	n, err := Open(ns)
	if err != nil {
		t.Fatal(err)
	}
	var ln net.Listener
	if err := n.Do(func() (err error) {
		ln, err = net.Listen("tcp", "127.0.0.1:0")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 8)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	inner := tcpDialer{ln.Addr().String()}
	if c, err := inner.Dial(context.Background()); err == nil {
		c.Close()
		t.Fatalf("dialed %s from the test's own namespace: the listener is not in %s", inner.addr, ns)
	}
	d := Wrap(n, inner)
	defer d.(*Dialer).Close()
	for range 3 {
		c, err := d.Dial(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		<-accepted
	}
	// Do moves its thread back: on a thread held across the call, the
	// namespace before and after is the same.
	home := make(chan [2]string)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		before, _ := os.Readlink("/proc/thread-self/ns/net")
		inside := ""
		n.Do(func() error { inside, _ = os.Readlink("/proc/thread-self/ns/net"); return nil })
		after, _ := os.Readlink("/proc/thread-self/ns/net")
		if inside == before {
			after = "never left: " + inside
		}
		home <- [2]string{before, after}
	}()
	if h := <-home; h[0] == "" || h[0] != h[1] {
		t.Errorf("thread namespace %s before Do, %s after", h[0], h[1])
	}
	if _, err := Open("no-such-namespace"); err == nil {
		t.Error("a missing namespace was accepted")
	}
}
