package report

// htmlHead is a step table column's head in the HTML report, with the
// unit of its figures where the figures do not carry one: CPU is in
// cores (the text tables say so once, in their legend).
func htmlHead(col column) string {
	switch col.key {
	case "+cpu", "proxy cpu", "cpu/unit", "target cpu", "gen cpu", "client cpu", "client cpu/unit", "server cpu", "server cpu/unit", "cp cpu", "node cpu":
		return col.head + ", cores"
	}
	return col.head
}
