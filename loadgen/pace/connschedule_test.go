package pace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseConnSchedule(t *testing.T) {
	for _, tc := range []struct {
		in      string
		max     int
		peak    int
		stages  string
		wantErr string
	}{
		{"10-200/1m,200/2m", 1000, 200, "10-200/1m,200/2m", ""},
		{"1/1s,3/1s", 1000, 3, "1/1s,3/1s", ""},
		{"0-1k/10s", 1000, 1000, "0-1000/10s", ""},
		{"0-1001/10s", 1000, 0, "", `"0-1001/10s": at most 1000 connections`},
		{"1.5/1s", 1000, 0, "", `"1.5/1s": connection counts are whole numbers`},
		{"ramp:1-5/1s", 1000, 0, "", `"ramp:1-5/1s": want a count or stages of counts, e.g. 10-200/1m,200/2m`},
		{"x/1s", 1000, 0, "", `stage 1 "x/1s"`},
	} {
		st, peak, err := ParseConnSchedule(tc.in, tc.max)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseConnSchedule(%q) = %v, %d, %v; want an error with %q", tc.in, st, peak, err, tc.wantErr)
			}
			continue
		}
		if err != nil || peak != tc.peak || st.String() != tc.stages {
			t.Errorf("ParseConnSchedule(%q) = %v, %d, %v; want %s, %d", tc.in, st, peak, err, tc.stages, tc.peak)
		}
	}
}

// -c is a count unless it holds a '/': then a schedule, whose peak is the
// count; a count is bounded as every int count is, a schedule by maxConns.
func TestParseConns(t *testing.T) {
	for _, tc := range []struct {
		in       string
		conns    int
		schedule string
		wantErr  string
	}{
		{"10", 10, "", ""},
		{"1k", 1000, "", ""},
		{"2000", 2000, "", ""}, // a count is not held to maxConns here: Validate says so
		{"3G", 0, "", `"3G" is too large`},
		{"1.5", 0, "", `"1.5" is not a whole number`},
		{"-1", 0, "", `"-1" is negative`},
		{"10-200/1m,200/2m", 200, "10-200/1m,200/2m", ""},
		{"0-1k/10s", 1000, "0-1k/10s", ""},
		{"0-1001/10s", 0, "", `"0-1001/10s": at most 1000 connections`},
		{"1.5/1s", 0, "", `"1.5/1s": connection counts are whole numbers`},
	} {
		conns, schedule, err := ParseConns(tc.in, 1000)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("ParseConns(%q) = %d, %q, %v; want the error %q", tc.in, conns, schedule, err, tc.wantErr)
			}
			continue
		}
		if err != nil || conns != tc.conns || schedule != tc.schedule {
			t.Errorf("ParseConns(%q) = %d, %q, %v; want %d, %q", tc.in, conns, schedule, err, tc.conns, tc.schedule)
		}
	}
}

func TestReadStages(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "stages")
	if err := os.WriteFile(file, []byte("# warm up\n0-200/1s\n\n200/1s  # hold\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("# nothing\n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing")
	for _, tc := range []struct{ in, want, wantErr string }{
		{"@" + file, "0-200/1s,200/1s", ""},
		{"2k/1s", "2k/1s", ""},
		{"2000", "2000", ""},
		{"@" + empty, "", "@" + empty + ": no stages in the file"},
		{"@" + missing, "", "@" + missing + ": no such file or directory"},
	} {
		got, err := ReadStages(tc.in)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("ReadStages(%q) = %q, %v; want the error %q", tc.in, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ReadStages(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
}
