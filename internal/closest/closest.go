// Package closest finds the name a mistyped one was meant to be, for the
// "did you mean" of flags, options files and sweep keys.
package closest

import "strconv"

// EditDistance is Levenshtein's: the insertions, deletions and
// substitutions that turn a into b.
func EditDistance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Nearest is the name of names closest to k (the fewest edits) and how
// many edits away it is; of several as close, the first in names (a
// caller wanting another order sorts them). "" and -1 when names is empty.
func Nearest(k string, names []string) (name string, edits int) {
	name, edits = "", -1
	for _, c := range names {
		if d := EditDistance(k, c); edits < 0 || d < edits {
			name, edits = c, d
		}
	}
	return name, edits
}

// Typo is the name of names that k is a typo of: the nearest (Nearest),
// when it is at most 2 edits away and fewer edits than half k's letters;
// else "".
func Typo(k string, names []string) string {
	name, edits := Nearest(k, names)
	if edits < 0 || edits > 2 || 2*edits >= len(k) {
		return ""
	}
	return name
}

// DidYouMean is the hint for a mistyped k, the same everywhere loadgen
// gives one: did you mean "ladder"?, naming Typo(k, names); "" when no
// name is near enough.
func DidYouMean(k string, names []string) string {
	name := Typo(k, names)
	if name == "" {
		return ""
	}
	return "did you mean " + strconv.Quote(name) + "?"
}
