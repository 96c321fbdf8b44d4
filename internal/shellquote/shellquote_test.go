package shellquote

import "testing"

func TestQuote(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"res", "res"},
		{"results/a-b_c.d:1,x=y@z%+", "results/a-b_c.d:1,x=y@z%+"},
		{"", "''"},
		{"my res", "'my res'"},
		{"it's", `'it'\''s'`},
		{"p99<10ms", "'p99<10ms'"},
		{"$HOME", "'$HOME'"},
		{"a*b", "'a*b'"},
	} {
		if got := Quote(tc.in); got != tc.want {
			t.Errorf("Quote(%q) = %s, want %s", tc.in, got, tc.want)
		}
	}
}
