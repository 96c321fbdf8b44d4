package cost

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// A /proc/PID/stat line whose comm holds spaces and parentheses: the fields
// are counted from the last ')'.
const statFixture = "4321 (a) b (c) S 17 4321 4321 0 -1 4194560 1234 0 0 0 " +
	"250 75 0 0 20 0 3 0 987654 104857600 2560 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n"

func TestParseStat(t *testing.T) {
	st, err := parseStat([]byte(statFixture))
	if err != nil {
		t.Fatal(err)
	}
	want := procStat{comm: "a) b (c", ppid: 17, cpu: 250 + 75, start: 987654}
	if st != want {
		t.Errorf("parseStat = %+v, want %+v", st, want)
	}
	for _, bad := range []string{
		"",
		"4321 a S 1",
		"4321 (x) S 1 2 3",
		"4321 (x) S one 4321 4321 0 -1 0 0 0 0 0 x 75 0 0 20 0 3 0 987654 1 2",
		"4321 )x( S 17 4321 4321 0 -1 4194560 1234 0 0 0 250 75 0 0 20 0 3 0 987654 1 2",
	} {
		if _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) succeeded", bad)
		}
	}
}

func FuzzParseStat(f *testing.F) {
	f.Add(statFixture)
	f.Add("1 ((()) R 0 0 0 0 0 0 0 0 0 0 1 2 0 0 0 0 0 0 3 0 0")
	f.Fuzz(func(t *testing.T, s string) {
		_, _ = parseStat([]byte(s)) // never panics
		// The line the kernel writes for any comm (it may hold spaces and
		// parentheses) and any counters reads back exactly.
		comm := s[:min(len(s), 16)]
		if strings.ContainsAny(comm, "\n\x00") {
			return
		}
		ppid, utime, stime, start := uint64(len(s)), uint64(len(s))*7, uint64(len(s))*3+1, uint64(len(s))<<20
		line := fmt.Sprintf("4321 (%s) S %d 4321 4321 0 -1 4194560 1234 0 0 0 %d %d 0 0 20 0 3 0 %d 104857600 2560\n", comm, ppid, utime, stime, start)
		st, err := parseStat([]byte(line))
		if err != nil || st.comm != comm || st.ppid != int(ppid) || st.cpu != utime+stime || st.start != start {
			t.Fatalf("%q: %+v, %v", line, st, err)
		}
	})
}

func TestParseStatm(t *testing.T) {
	if pages, err := parseStatm([]byte("26000 25600 300 100 0 25800 0\n")); err != nil || pages != 25600 {
		t.Errorf("parseStatm = %d, %v; want 25600 pages", pages, err)
	}
	if _, err := parseStatm([]byte("26000")); err == nil {
		t.Error("parseStatm of one field succeeded")
	}
}

func TestParseUptime(t *testing.T) {
	if ticks, err := parseUptime([]byte("2714.93 5200.10\n")); err != nil || ticks != 271493 {
		t.Errorf("parseUptime = %d, %v; want 271493 ticks", ticks, err)
	}
	for _, bad := range []string{"", "x 1", "-1 2"} {
		if _, err := parseUptime([]byte(bad)); err == nil {
			t.Errorf("parseUptime(%q) succeeded", bad)
		}
	}
}

func TestNameMatches(t *testing.T) {
	denied := errors.New("permission denied")
	long := "nginx-ingress-controller" // comm: "nginx-ingress-c"
	for _, tc := range []struct {
		name, comm, exe string
		exeErr          error
		want            bool
	}{
		{"nginx", "nginx", "nginx", nil, true},
		{"nginx", "nginx", "", denied, true},
		{"python3.12", "python3", "python3.12", nil, true}, // started through a python3 symlink
		{"nginx", "nginx-debug", "nginx-debug", nil, false},
		{"ngin", "nginx", "nginx", nil, false},
		{long, "nginx-ingress-c", long, nil, true},
		{long, "nginx-ingress-c", "", denied, true},                   // exe unreadable: the cut comm decides
		{long, "nginx-ingress-c", "nginx-ingress-custom", nil, false}, // exe readable and different
		{"kworker/0:1", "kworker/0:1", "", denied, true},
	} {
		if got := nameMatches(tc.name, tc.comm, tc.exe, tc.exeErr); got != tc.want {
			t.Errorf("nameMatches(%q, comm %q, exe %q, %v) = %v, want %v", tc.name, tc.comm, tc.exe, tc.exeErr, got, tc.want)
		}
	}
}
