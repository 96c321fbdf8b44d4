// Package shellquote quotes a word for a POSIX shell: the one rule of the
// commands loadgen prints for a user to run (resume hints, refusals that
// say how to continue).
package shellquote

import "strings"

// safe are the bytes a word may hold and still be given to a shell as it
// is.
const safe = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:,=@%+"

// Quote returns s as one word for a POSIX shell: as it is when every byte
// is safe, in single quotes otherwise (an empty s too), a single quote in
// it closed, escaped and opened again.
func Quote(s string) string {
	if s != "" && strings.Trim(s, safe) == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
