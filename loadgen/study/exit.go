package study

import (
	"fmt"
	"strings"

	"loadgen/results/compare"
)

// Exit is a study's exit status (compare.Fold): the worst of its steps'
// (worst) and, when an ordering was not decidable for contention
// (Table.Contended), Undecided (98) unless allowContended. line says so,
// for standard error; it is "" when every ordering was decidable.
func Exit(worst compare.Exit, contended []string, allowContended bool) (code compare.Exit, line string) {
	undecided := compare.OK
	switch {
	case len(contended) == 0:
	case allowContended:
		line = fmt.Sprintf("%s not decidable for contention: allowed (--allow-contended)", orderings(len(contended)))
	default:
		line = fmt.Sprintf("%s not decidable for contention (exit status 98; --allow-contended: 0): %s",
			orderings(len(contended)), strings.Join(contended, "; "))
		undecided = compare.Undecided
	}
	return compare.Fold(nil, worst, undecided), line
}

// orderings counts orderings: "1 ordering", "2 orderings".
func orderings(n int) string {
	if n == 1 {
		return "1 ordering"
	}
	return fmt.Sprintf("%d orderings", n)
}
