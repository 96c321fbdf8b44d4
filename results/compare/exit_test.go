package compare

import (
	"strings"
	"testing"
)

// The help's exit table names every status, in ascending order, each
// once, with words of its own: a status added to Exit and not to the
// table fails here.
func TestExitTable(t *testing.T) {
	rows := ExitTable()
	if len(rows) != len(severity) {
		t.Errorf("%d rows, %d statuses", len(rows), len(severity))
	}
	for i, r := range rows {
		if _, ok := severity[r.Code]; !ok {
			t.Errorf("row %d: %v is no status", i, r.Code)
		}
		if i > 0 && r.Code <= rows[i-1].Code {
			t.Errorf("row %d: %v after %v", i, r.Code, rows[i-1].Code)
		}
		if strings.TrimSpace(r.Help) == "" || strings.Contains(r.Help, "\n") {
			t.Errorf("row %d (%v): help %q: want one line of words", i, r.Code, r.Help)
		}
	}
	for _, tc := range []struct {
		code Exit
		help string
	}{
		{OK, "all good: every run ran, every --assert held, nothing regressed"},
		{Undecided, "not decidable: worse than --max-regression, but within what contention on a busy machine can explain (--allow-contended: 0)"},
		{Interrupted, "Ctrl-C"},
		{Terminated, "SIGTERM"},
	} {
		found := false
		for _, r := range rows {
			if r.Code == tc.code {
				found = true
				if r.Help != tc.help {
					t.Errorf("%v: help %q, want %q", tc.code, r.Help, tc.help)
				}
			}
		}
		if !found {
			t.Errorf("no row for %v", tc.code)
		}
	}
}

// Every command words an interruption alike.
func TestInterruptedLine(t *testing.T) {
	for _, tc := range []struct{ what, want string }{
		{"no request was in flight", "interrupted: no request was in flight"},
		{"finished steps are saved; continue with: loadgen sweep -o r --resume", "interrupted: finished steps are saved; continue with: loadgen sweep -o r --resume"},
		{"the measurements made are saved, and the run's objects deleted", "interrupted: the measurements made are saved, and the run's objects deleted"},
	} {
		if got := InterruptedLine(tc.what); got != tc.want {
			t.Errorf("InterruptedLine(%q) = %q, want %q", tc.what, got, tc.want)
		}
	}
}
