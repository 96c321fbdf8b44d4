package closest

import "testing"

// EditDistance counts insertions, deletions and substitutions.
func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"ladder", "ladder", 0}, {"ladderr", "ladder", 1}, {"ladr", "ladder", 2}, {"uri", "url", 1}, {"", "abc", 3}, {"kitten", "sitting", 3}} {
		if got := EditDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
