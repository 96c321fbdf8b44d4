package worker

import (
	"slices"
	"testing"
)

func TestShareArgs(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		share Share
		want  []string
	}{
		{"closed loop: --max-errors 100% first, the share before the URL",
			[]string{"-d", "30s", "http://t/get"}, Share{Connections: 16, Threads: 2},
			[]string{"--max-errors", "100%", "-d", "30s", "-c", "16", "-t", "2", "--json", "/r.json", "http://t/get"}},
		{"open loop: the share's rate",
			[]string{"http://t/"}, Share{Connections: 4, Threads: 1, Rate: 250.5},
			[]string{"--max-errors", "100%", "-c", "4", "-t", "1", "-R", "250.5", "--json", "/r.json", "http://t/"}},
		{"the user's --max-errors is kept, none added",
			[]string{"--max-errors", "1%", "http://t/"}, Share{Connections: 1, Threads: 1},
			[]string{"--max-errors", "1%", "-c", "1", "-t", "1", "--json", "/r.json", "http://t/"}},
		{"--max-errors=… counts as given",
			[]string{"--max-errors=5", "http://t/"}, Share{Connections: 1, Threads: 1},
			[]string{"--max-errors=5", "-c", "1", "-t", "1", "--json", "/r.json", "http://t/"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.args)
			got := ShareArgs(tc.args, tc.share, "/r.json")
			if !slices.Equal(got, tc.want) {
				t.Errorf("ShareArgs(%q) = %q, want %q", tc.args, got, tc.want)
			}
			if !slices.Equal(tc.args, in) {
				t.Errorf("ShareArgs changed its input: %q, was %q", tc.args, in)
			}
		})
	}
}
