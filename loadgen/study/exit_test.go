package study

import (
	"testing"

	"loadgen/results/compare"
)

// A study exits 98 for an ordering not decidable for contention unless
// allowed, the worse status of a failed step winning, and says which.
func TestExit(t *testing.T) {
	for _, tc := range []struct {
		name      string
		worst     compare.Exit
		contended []string
		allow     bool
		want      compare.Exit
		line      string
	}{
		{"all decided", compare.OK, nil, false, compare.OK, ""},
		{"a failed step, all decided", compare.Failed, nil, false, compare.Failed, ""},
		{"one contended", compare.OK, []string{"vxlan below host-gw on x"}, false, compare.Undecided,
			"1 ordering not decidable for contention (exit status 98; --allow-contended: 0): vxlan below host-gw on x"},
		{"two contended", compare.OK, []string{"a below b on x", "c about the same as d on y"}, false, compare.Undecided,
			"2 orderings not decidable for contention (exit status 98; --allow-contended: 0): a below b on x; c about the same as d on y"},
		{"allowed", compare.OK, []string{"a below b on x", "c below d on y"}, true, compare.OK,
			"2 orderings not decidable for contention: allowed (--allow-contended)"},
		{"allowed, one", compare.Breached, []string{"a below b on x"}, true, compare.Breached,
			"1 ordering not decidable for contention: allowed (--allow-contended)"},
		{"a failed step wins", compare.Failed, []string{"a below b on x"}, false, compare.Failed,
			"1 ordering not decidable for contention (exit status 98; --allow-contended: 0): a below b on x"},
		{"a breached check wins", compare.Breached, []string{"a below b on x"}, false, compare.Breached,
			"1 ordering not decidable for contention (exit status 98; --allow-contended: 0): a below b on x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, line := Exit(tc.worst, tc.contended, tc.allow)
			if got != tc.want || line != tc.line {
				t.Errorf("got %v %q\nwant %v %q", got, line, tc.want, tc.line)
			}
		})
	}
}
