// Package listening is the line a target prints once it listens (loadgen
// serve: "tcp echo/sink listening on 127.0.0.1:9000; Ctrl-C to stop") and
// the reading of the address back from it, by whoever started the target
// as a child process: one format, both ends here; and the starting of
// such a child, which waits for its line (Start).
package listening

import "strings"

const (
	marker = "listening on "
	stop   = "; Ctrl-C to stop"
)

// Line is the line a target named what prints once it listens on addr (a
// host:port, or a URL scheme://host:port), with detail, if any, right
// after the address: it must begin with a space, ',' or ';', which end the
// address for Addr (" (HTTP/1.1 + h2c)", ", plaintext (h2c)").
func Line(what, addr, detail string) string {
	return what + " " + marker + addr + detail + stop
}

// Addr is the host:port a Line says its target listens on, without the
// URL's scheme (http or https) if it had one; ok is false for a line that
// says nothing of where it listens.
func Addr(line string) (addr string, ok bool) {
	_, rest, ok := strings.Cut(line, marker)
	if !ok {
		return "", false
	}
	for _, scheme := range []string{"http://", "https://"} {
		if after, found := strings.CutPrefix(rest, scheme); found {
			rest = after
			break
		}
	}
	if i := strings.IndexAny(rest, " \t\n\f\r;,"); i >= 0 {
		rest = rest[:i]
	}
	return rest, rest != ""
}
