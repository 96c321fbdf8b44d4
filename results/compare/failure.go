package compare

import (
	"fmt"
	"strings"
)

// Failure is what a comparison that does not pass (Exit: Breached or
// Undecided) says: how many regressions, or figures contention leaves
// undecided, beyond the limit, naming the first three ("and N more");
// "" when it passes.
func (c *Comparison) Failure() string {
	code := c.Exit()
	rows, what := c.Regressions(), "regression"
	switch code {
	case OK:
		return ""
	case Undecided:
		rows, what = c.Undecided(), "figure"
	}
	var names []string
	for i, r := range rows {
		if i == 3 {
			names = append(names, fmt.Sprintf("and %d more", len(rows)-i))
			break
		}
		names = append(names, r.Step+" "+r.Metric)
	}
	if len(rows) > 1 {
		what += "s"
	}
	limit := fmt.Sprintf("%g%%", 100*c.Options.MaxRegression)
	if code == Undecided {
		return fmt.Sprintf("%d %s not decidable, worse than %s within what contention can explain: %s (--allow-contended: exit 0)",
			len(rows), what, limit, strings.Join(names, ", "))
	}
	return fmt.Sprintf("%d %s beyond %s: %s", len(rows), what, limit, strings.Join(names, ", "))
}
