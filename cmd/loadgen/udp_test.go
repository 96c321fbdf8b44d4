package main

import (
	"fmt"
	"strings"
	"testing"

	"loadgen/targets/udpecho"
)

func startUDPServer(t *testing.T, dropEvery int) *udpecho.Server {
	t.Helper()
	srv, err := udpecho.New(udpecho.Config{DropEvery: dropEvery})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// -p udp-rr and -p udp-stream from the command line: the summary says what
// was sent, received and lost, the target's drops included.
func TestRunUDP(t *testing.T) {
	srv := startUDPServer(t, 10)
	code, out, stderr := cli(t, "run", "-p", "udp-rr", "-c", "1", "-n", "100", "--timeout", "50ms", "--size", "32", srv.Addr())
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	want := fmt.Sprintf("Datagrams: 100 sent, %d answered in time, %d lost (10.00%%)", 100-srv.Dropped(), srv.Dropped())
	if srv.Dropped() != 10 || !strings.Contains(out, want) {
		t.Errorf("target dropped %d; output lacks %q:\n%s", srv.Dropped(), want, out)
	}
	sent := srv.Dropped() + srv.Echoed()
	code, out, stderr = cli(t, "run", "-p", "udp-stream", "-c", "1", "-n", "200", "--size", "100", srv.Addr())
	if code != exitOK {
		t.Fatalf("exit %d\n%s%s", code, out, stderr)
	}
	sunk, dropped := srv.Sunk(), srv.Dropped()-(sent-srv.Echoed())
	want = fmt.Sprintf("Datagrams: 200 sent, %d received by the sink", sunk)
	if sunk+dropped != 200 || !strings.Contains(out, want) || !strings.Contains(out, fmt.Sprintf(", %d lost (", dropped)) {
		t.Errorf("sink took %d, dropped %d; output lacks %q:\n%s", sunk, dropped, want, out)
	}
}

// Bad UDP input is one line and exit status 2.
func TestRunUDPUsage(t *testing.T) {
	srv := startUDPServer(t, 0)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--size", "65508"}, "at most 65507 bytes"},
		{[]string{"--streams", "4"}, "--streams does not apply"},
		{[]string{"--body", "x"}, "--body, -m and -H do not apply"},
	} {
		args := append([]string{"run", "-p", "udp-rr", "-d", "1s"}, tc.args...)
		code, out, stderr := cli(t, append(args, srv.Addr())...)
		first := strings.Split(strings.TrimSpace(stderr), "\n")[0]
		if code != exitUsage || !strings.Contains(first, tc.want) {
			t.Errorf("%v: exit %d, first line %q, want %d and %q\n%s", tc.args, code, first, exitUsage, tc.want, out)
		}
	}
	if code, _, stderr := cli(t, "serve", "udp", "--drop-every", "-1"); code != exitUsage {
		t.Errorf("serve udp --drop-every -1: exit %d\n%s", code, stderr)
	}
}
