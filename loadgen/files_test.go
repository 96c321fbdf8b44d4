package loadgen

import (
	"strings"
	"testing"

	"loadgen/results"
)

func TestCheckFileLimit(t *testing.T) {
	for _, tc := range []struct {
		conns, streams int
		open           bool
		limit          uint64
		want           string // "" for no error
	}{
		{10000, 0, false, 20000, ""},
		{10000, 0, true, 20000, "at most 9968 connections"},
		{10000, 0, false, 1024, "at most 960 connections"},
		{1000, 10, false, 1100, ""},                      // streams share their connection's socket
		{1000, 10, true, 1100, "at most 94 connections"}, // a timerfd per stream worker
		{5, 0, false, 0, ""},                             // unknown limit
	} {
		var c results.Config
		c.Connections, c.Streams = tc.conns, tc.streams
		err := checkFileLimit(c, tc.open, tc.limit)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: error %v, want %q", tc, err, tc.want)
		}
	}
}
