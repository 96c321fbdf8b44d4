package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"loadgen/meshes/caddy"
	"loadgen/meshes/k8s"
	"loadgen/meshes/proxytest"
)

// podNetns runs script in a network namespace and a mount namespace of
// its own, as a pod's container runs: loopback up, /run a fresh tmpfs
// (the sidecar's run directory is there), HOME in it. "$0" is the
// proxy's binary, "$1" its config.
func podNetns(ctx context.Context, script, bin, conf string) *exec.Cmd {
	return exec.CommandContext(ctx, "unshare", "--net", "--mount", "sh", "-c",
		"mount -t tmpfs tmpfs /run && mkdir -p /run/loadgen-sidecar && ip link set lo up && export HOME=/run/loadgen-sidecar && "+script,
		bin, conf)
}

// TestCaddySidecarCounter checks that the Caddy config k8s run renders for a
// pod's sidecar passes caddy validate, and run as the pod runs it, its admin
// API answers readCounter in the pod's network namespace as the node
// tests read it: a request through the outbound and the inbound servers
// counts twice, one to the inbound server once, a read of the counter
// not at all.
func TestCaddySidecarCounter(t *testing.T) {
	bin := proxytest.NeedBinary(t, caddy.Available)
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("needs root: network and mount namespaces")
		}
		t.Skip("needs root: network and mount namespaces")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// The outbound side's upstream is the pod's own inbound side: one
	// request crosses both servers.
	conf, err := k8s.SidecarConfig(k8s.ProxyCaddy, k8s.SidecarLayout(k8s.ProxyCaddy, "127.0.0.1:15006", 8080, 0), false)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), k8s.SidecarConfigFile(k8s.ProxyCaddy))
	if err := os.WriteFile(path, conf, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := podNetns(ctx, `exec "$0" validate --config "$1"`, bin, path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Valid configuration") {
		t.Fatalf("caddy validate of k8s run's config: %v\n%s", err, out)
	}

	cmd := podNetns(ctx, `exec "$0" run --config "$1"`, bin, path)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-exited
	}()
	pid := cmd.Process.Pid // unshare execs sh, which execs caddy
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	poll := func(what string, done func() error) {
		t.Helper()
		for {
			err := done()
			if err == nil {
				return
			}
			select {
			case e := <-exited:
				t.Fatalf("%s: caddy exited: %v\n%s", what, e, log.String())
			case <-ctx.Done():
				t.Fatalf("%s: %v\n%s", what, err, log.String())
			case <-tick.C:
			}
		}
	}
	// The app, on the address the inbound side forwards to, once unshare
	// has made the namespace.
	poll("caddy's network namespace", func() error {
		if sameNetns(pid) {
			return fmt.Errorf("pid %d is still in this network namespace", pid)
		}
		return nil
	})
	app, err := listenIn(pid, "tcp", "127.0.0.1:8080")
	if err != nil {
		t.Fatalf("the app's listener in caddy's namespace: %v", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })}
	go func() { _ = srv.Serve(app) }()
	defer srv.Close()

	// Caddy is up once its admin API answers the read.
	var first int64
	poll("caddy's counter", func() (err error) {
		first, err = readCounter(pid, k8s.ProxyCaddy)
		return err
	})
	if first != 0 {
		t.Errorf("caddy counted %d requests before any", first)
	}
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		return dialIn(ctx, pid, network, addr)
	}}}
	get := func(url string) {
		t.Helper()
		resp, err := client.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != "ok" {
			t.Fatalf("%s: %s %q\n%s", url, resp.Status, b, log.String())
		}
	}
	const outbound, inbound = 20, 5
	for range outbound {
		get("http://127.0.0.1:15001/")
	}
	for range inbound {
		get("http://127.0.0.1:15006/")
	}
	for i := range 3 { // the reads themselves are not counted
		n, err := readCounter(pid, k8s.ProxyCaddy)
		if err != nil || n != 2*outbound+inbound {
			t.Errorf("read %d: caddy counted %d (%v), want %d through both servers and %d to the inbound one", i, n, err, outbound, inbound)
		}
	}
}

// listenIn listens in pid's network namespace, as dialIn connects.
func listenIn(pid int, network, addr string) (net.Listener, error) {
	type res struct {
		l   net.Listener
		err error
	}
	ch := make(chan res, 1)
	go func() {
		runtime.LockOSThread()
		home, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			ch <- res{nil, err}
			return
		}
		defer unix.Close(home)
		target, err := unix.Open(fmt.Sprintf("/proc/%d/ns/net", pid), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			ch <- res{nil, err}
			return
		}
		defer unix.Close(target)
		if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			ch <- res{nil, err}
			return
		}
		l, err := net.Listen(network, addr)
		if serr := unix.Setns(home, unix.CLONE_NEWNET); serr != nil {
			ch <- res{l, err}
			return // still locked: the runtime retires the thread
		}
		runtime.UnlockOSThread()
		ch <- res{l, err}
	}()
	r := <-ch
	return r.l, r.err
}

// sameNetns reports whether pid is in this process's network namespace.
func sameNetns(pid int) bool {
	a, err1 := os.Stat(fmt.Sprintf("/proc/%d/ns/net", pid))
	b, err2 := os.Stat("/proc/self/ns/net")
	return err1 != nil || err2 != nil || os.SameFile(a, b)
}
