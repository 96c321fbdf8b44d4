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

// Nearest takes the fewest edits, and the first of a tie.
func TestNearest(t *testing.T) {
	for _, tc := range []struct {
		k     string
		names []string
		want  string
		edits int
	}{
		{"ladderr", []string{"ladder", "paths", "rates"}, "ladder", 1},
		{"rate", []string{"rates", "date"}, "rates", 1}, // a tie: the first
		{"rate", []string{"date", "rates"}, "date", 1},  // the other order
		{"durashun", []string{"duration", "d"}, "duration", 3},
		{"x", nil, "", -1},
		{"same", []string{"other", "same"}, "same", 0},
	} {
		name, edits := Nearest(tc.k, tc.names)
		if name != tc.want || edits != tc.edits {
			t.Errorf("Nearest(%q, %q) = %q, %d, want %q, %d", tc.k, tc.names, name, edits, tc.want, tc.edits)
		}
	}
}
