package proxytest

import (
	"bytes"
	"net/http"
	"os"
	"strconv"
	"testing"
	"time"
)

// maxBatches bounds Load: at most this many batches of requests.
const maxBatches = 50

// Load sends batches of GETs of url (a /bytes/N URL) until the processes
// pids have been charged CPU by the kernel (it counts in 10 ms ticks, so
// a hundred quick requests may show none), at most maxBatches. It returns
// how many requests it sent; every one must have succeeded.
func Load(t *testing.T, c *http.Client, url string, batch int, pids []int) int {
	t.Helper()
	start := CPUTicks(pids)
	sent := 0
	for range maxBatches {
		for range batch {
			Get(t, c, url)
			sent++
		}
		if CPUTicks(pids) > start {
			break
		}
	}
	return sent
}

// CPUTicks is the user and system time, in clock ticks, that the kernel
// has charged the live processes of pids (/proc/PID/stat fields 14, 15).
func CPUTicks(pids []int) uint64 {
	var total uint64
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		end := bytes.LastIndexByte(b, ')')
		if end < 0 {
			continue
		}
		f := bytes.Fields(b[end+1:])
		if len(f) < 13 {
			continue
		}
		// After "(comm)": state is field 3, utime 14, stime 15.
		u, _ := strconv.ParseUint(string(f[11]), 10, 64)
		s, _ := strconv.ParseUint(string(f[12]), 10, 64)
		total += u + s
	}
	return total
}

// WaitCount polls a proxy's request counter until it reads want: proxies
// that count by their log (Caddy) write the line after the answer. It
// fails t with the last reading if that does not happen within 10s.
func WaitCount(t *testing.T, what string, read func() (uint64, error), want uint64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n, err := read()
		if err == nil && n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%s counted %d requests (%v), the client sent %d", what, n, err, want)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
