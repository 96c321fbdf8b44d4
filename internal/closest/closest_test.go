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

// A name is suggested only when k could be a typo of it: at most 2 edits,
// and fewer than half of k's letters; the hint's wording is the one every
// caller prints.
func TestDidYouMean(t *testing.T) {
	names := []string{"connections", "duration", "ladder", "rate", "url"}
	for _, tc := range []struct {
		k, typo, hint string
	}{
		{"conections", "connections", `did you mean "connections"?`},
		{"ladderr", "ladder", `did you mean "ladder"?`},
		{"conectons", "connections", `did you mean "connections"?`}, // 2 edits of 9
		{"ladr", "", ""},                         // 2 edits of 4: half
		{"uri", "url", `did you mean "url"?`},    // 1 edit of 3
		{"ur", "", ""},                           // 1 edit of 2: half
		{"durashun", "", ""},                     // 3 edits
		{"colour", "", ""},                       // nothing near
		{"rate", "rate", `did you mean "rate"?`}, // 0 edits
		{"", "", ""},
	} {
		if got := Typo(tc.k, names); got != tc.typo {
			t.Errorf("Typo(%q) = %q, want %q", tc.k, got, tc.typo)
		}
		if got := DidYouMean(tc.k, names); got != tc.hint {
			t.Errorf("DidYouMean(%q) = %q, want %q", tc.k, got, tc.hint)
		}
	}
	if got := DidYouMean("x", nil); got != "" {
		t.Errorf("DidYouMean with no names = %q", got)
	}
}
