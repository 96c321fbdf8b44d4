package loadgen_test

import (
	"net/netip"
	"os"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"loadgen/loadgen"
)

// In a real run, a loop that keeps its P and drives one connection reads
// it blocking (its socket is in blocking mode mid-run); no other driver
// or variant does.
func TestOneConnectionReadsBlocking(t *testing.T) {
	forDrivers(t, func(t *testing.T) {
		srv := newServer(t, nil)
		addr := netip.MustParseAddrPort(srv.Listener.Addr().String())
		// Looked at from Progress, mid-run by construction and on Run's
		// own goroutine: a timer started before the run could fire during
		// a slow start or after the end, and wrote what the test read
		// without synchronization.
		var blocking, sockets int
		cfg := conf(1, 600*time.Millisecond)
		cfg.Interval = 100 * time.Millisecond
		cfg.Progress = func(p loadgen.Progress) {
			if sockets == 0 && p.Elapsed >= 200*time.Millisecond && p.Elapsed < cfg.Duration.D() {
				blocking, sockets = socketsTo(addr)
			}
		}
		run(t, cfg, srv.URL)
		if sockets == 0 {
			t.Fatal("no socket to the target found mid-run")
		}
		// HTTP/2 and TLS connections are multiplexed sockets, never solo.
		want := 0
		if driver == loadgen.DriverLoop && keepsP && !h2c && !overTLS {
			want = 1
		}
		if blocking != want {
			t.Errorf("%d of %d sockets to the target in blocking mode mid-run, want %d", blocking, sockets, want)
		}
	})
}

// socketsTo counts this process's sockets whose peer is addr, and those
// of them in blocking mode.
func socketsTo(addr netip.AddrPort) (blocking, all int) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, 0
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		sa, err := unix.Getpeername(fd)
		if err != nil {
			continue
		}
		in4, ok := sa.(*unix.SockaddrInet4)
		if !ok || netip.AddrPortFrom(netip.AddrFrom4(in4.Addr), uint16(in4.Port)) != addr {
			continue
		}
		all++
		if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil && fl&unix.O_NONBLOCK == 0 {
			blocking++
		}
	}
	return blocking, all
}
