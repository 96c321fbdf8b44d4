package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// mdFiles lists README.md and every Markdown file under docs/, relative
// to the repository.
func mdFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(repoRoot, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// mdLine is one line of a Markdown file, and the fenced block it is in
// (its info string's first word; fenced false outside any block).
type mdLine struct {
	n      int
	text   string
	fenced bool
	lang   string
}

var fenceRE = regexp.MustCompile("^\\s*(```+|~~~+)\\s*([^\\s`]*)")

// mdLines splits a Markdown document into lines marked by their fence.
func mdLines(doc string) []mdLine {
	var out []mdLine
	fence, lang := "", ""
	for i, l := range strings.Split(doc, "\n") {
		if m := fenceRE.FindStringSubmatch(l); m != nil {
			if fence == "" {
				fence, lang = m[1], m[2]
				out = append(out, mdLine{i + 1, l, true, lang})
				continue
			}
			if strings.HasPrefix(strings.TrimSpace(l), fence) && strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(l), fence[:1])) == "" {
				out = append(out, mdLine{i + 1, l, true, lang})
				fence, lang = "", ""
				continue
			}
		}
		out = append(out, mdLine{i + 1, l, fence != "", lang})
	}
	return out
}

var (
	codeSpanRE = regexp.MustCompile("`+[^`]*`+")
	linkRE     = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)`)
	refDefRE   = regexp.MustCompile(`^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(\s|$)`)
	htmlRefRE  = regexp.MustCompile(`(?i)<(?:a|img)\s[^>]*?(?:href|src)="([^"]*)"`)
	htmlIDRE   = regexp.MustCompile(`(?i)<a\s[^>]*?(?:id|name)="([^"]+)"`)
	headingRE  = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	htmlTagRE  = regexp.MustCompile(`<[^>]+>`)
)

// slug is GitHub's anchor for a heading's text: the text as rendered
// (links as their text, no code or emphasis marks, no HTML), lower-cased,
// every character but letters, digits, marks, '_', '-' and spaces
// dropped, spaces made '-'.
func slug(heading string) string {
	s := linkRE.ReplaceAllString(heading, "$1")
	s = htmlTagRE.ReplaceAllString(s, "")
	s = strings.NewReplacer("`", "", "*", "").Replace(s)
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors returns the anchors a Markdown document defines: its headings'
// slugs (a repeated one numbered -1, -2, … as GitHub does) and the ids of
// its <a id> and <a name> tags.
func anchors(doc string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, l := range mdLines(doc) {
		if l.fenced {
			continue
		}
		if m := headingRE.FindStringSubmatch(l.text); m != nil {
			s := slug(m[2])
			if n := seen[s]; n > 0 {
				out[fmt.Sprintf("%s-%d", s, n)] = true
			} else {
				out[s] = true
			}
			seen[s]++
		}
		for _, m := range htmlIDRE.FindAllStringSubmatch(l.text, -1) {
			out[m[1]] = true
		}
	}
	return out
}

// links returns the relative links of a Markdown document with their line
// numbers: inline links and images, reference definitions and HTML href
// and src attributes, outside code.
func links(doc string) (out []struct {
	line   int
	target string
}) {
	for _, l := range mdLines(doc) {
		if l.fenced {
			continue
		}
		text := codeSpanRE.ReplaceAllString(l.text, "")
		var targets []string
		for _, m := range linkRE.FindAllStringSubmatch(text, -1) {
			targets = append(targets, m[2])
		}
		if m := refDefRE.FindStringSubmatch(text); m != nil {
			targets = append(targets, m[1])
		}
		for _, m := range htmlRefRE.FindAllStringSubmatch(text, -1) {
			targets = append(targets, m[1])
		}
		for _, tg := range targets {
			if tg == "" || regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`).MatchString(tg) {
				continue // an absolute URL: http:, https:, mailto:
			}
			out = append(out, struct {
				line   int
				target string
			}{l.n, tg})
		}
	}
	return out
}

// checkLink says what is wrong with a relative link from file (relative to
// the repository): a path outside the repository or missing, or an anchor
// the target does not define.
func checkLink(file, target string, read func(string) (string, error)) error {
	path, frag, _ := strings.Cut(target, "#")
	dest := file
	if path != "" {
		dest = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(file), path)))
		if dest == ".." || strings.HasPrefix(dest, "../") || filepath.IsAbs(path) {
			return fmt.Errorf("%s is outside the repository", target)
		}
		if _, err := os.Stat(filepath.Join(repoRoot, dest)); err != nil {
			return fmt.Errorf("%s: no such file (%s)", target, dest)
		}
	}
	if frag == "" {
		return nil
	}
	if !strings.HasSuffix(dest, ".md") {
		if regexp.MustCompile(`^L\d+(-L\d+)?$`).MatchString(frag) {
			return nil // a line of a source file
		}
		return fmt.Errorf("%s: an anchor into %s, which is not Markdown", target, dest)
	}
	doc, err := read(dest)
	if err != nil {
		return err
	}
	if !anchors(doc)[frag] {
		return fmt.Errorf("%s: %s has no heading or anchor #%s", target, dest, frag)
	}
	return nil
}

// shellWords splits a command line as sh would, enough for documented
// commands: quotes, backslashes, a comment, and the end of a simple
// command (;, &, |, a redirection) end the words of one command; each
// command of the line is returned.
func shellWords(line string) [][]string {
	var cmds [][]string
	var words []string
	var w strings.Builder
	inWord, quote := false, rune(0)
	end := func() {
		if inWord {
			words = append(words, w.String())
		}
		w.Reset()
		inWord = false
	}
	endCmd := func() {
		end()
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
		words = nil
	}
	rs := []rune(line)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				w.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '\\' && i+1 < len(rs):
			i++
			w.WriteRune(rs[i])
			inWord = true
		case r == '#' && !inWord:
			endCmd()
			return cmds
		case r == ' ' || r == '\t':
			end()
		case r == ';' || r == '&' || r == '|' || r == '(' || r == ')':
			endCmd()
		case r == '>' || r == '<':
			// A redirection: its word is a file, not an argument.
			if inWord && (w.String() == "2" || w.String() == "1") {
				w.Reset()
				inWord = false
			}
			end()
			for i+1 < len(rs) && (rs[i+1] == '>' || rs[i+1] == '&' || rs[i+1] == ' ') {
				i++
			}
			for i+1 < len(rs) && rs[i+1] != ' ' {
				i++
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	endCmd()
	return cmds
}

// isPlaceholder reports whether w is a word the docs put where the reader
// fills in their own (… or <something>): never a subcommand nor a flag.
func isPlaceholder(w string) bool {
	return strings.Contains(w, "…") || strings.Contains(w, "...") || (strings.HasPrefix(w, "<") && strings.HasSuffix(w, ">"))
}

// lookupFlag finds a flag of c by its long name or its shorthand, its own
// or inherited from its parents.
func lookupFlag(c *cobra.Command, name string, short bool) *pflag.Flag {
	for _, fs := range []*pflag.FlagSet{c.Flags(), c.InheritedFlags()} {
		if short {
			if f := fs.ShorthandLookup(name); f != nil {
				return f
			}
		} else if f := fs.Lookup(name); f != nil {
			return f
		}
	}
	return nil
}

// checkCommand checks a documented loadgen command line (its words after
// "loadgen") against the command tree: the subcommand exists and each
// flag is known to it or its parents. Words after "--" belong to another
// command line (k8s worker's run) and are not checked.
func checkCommand(root *cobra.Command, args []string) error {
	c := root
	positional := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return nil
		case strings.HasPrefix(a, "--"):
			name, _, hasValue := strings.Cut(a[2:], "=")
			f := lookupFlag(c, name, false)
			if f == nil {
				return fmt.Errorf("%s has no flag --%s", c.CommandPath(), name)
			}
			if !hasValue && f.NoOptDefVal == "" {
				i++
			}
		case strings.HasPrefix(a, "-") && len(a) > 1 && !isPlaceholder(a):
			for j := 1; j < len(a); j++ {
				f := lookupFlag(c, a[j:j+1], true)
				if f == nil {
					return fmt.Errorf("%s has no flag -%s", c.CommandPath(), a[j:j+1])
				}
				if f.NoOptDefVal == "" {
					if j == len(a)-1 {
						i++
					}
					break
				}
			}
		case isPlaceholder(a):
			positional = true
		default:
			if !positional {
				if sub, _, err := c.Find([]string{a}); err == nil && sub != c {
					c = sub
					continue
				}
				if c.HasSubCommands() { // groups (serve, k8s) and lab, which takes no words
					return fmt.Errorf("%s has no command %q", c.CommandPath(), a)
				}
			}
			positional = true
		}
	}
	return nil
}

// documentedCommands returns the loadgen command lines in a document's
// sh, bash, shell and console blocks: every line of the first three (a
// line ending in \ goes on), the lines of a console block that start
// with "$ ". sudo, variable assignments and a path to the binary are
// left out; each returned command starts after "loadgen".
func documentedCommands(doc string) (out []struct {
	line int
	args []string
	text string
}) {
	var cont string
	contLine := 0
	for _, l := range mdLines(doc) {
		if !l.fenced || fenceRE.MatchString(l.text) {
			cont = ""
			continue
		}
		text := l.text
		switch l.lang {
		case "sh", "bash", "shell":
		case "console":
			if cont == "" {
				var ok bool
				if text, ok = strings.CutPrefix(strings.TrimSpace(text), "$ "); !ok {
					continue
				}
			}
		default:
			continue
		}
		if cont != "" {
			text = cont + " " + strings.TrimSpace(text)
		} else {
			contLine = l.n
		}
		if strings.HasSuffix(text, "\\") {
			cont = strings.TrimSuffix(text, "\\")
			continue
		}
		cont = ""
		for _, words := range shellWords(text) {
			for len(words) > 0 && (words[0] == "sudo" || words[0] == "-E" || regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`).MatchString(words[0])) {
				words = words[1:]
			}
			if len(words) == 0 || filepath.Base(words[0]) != "loadgen" {
				continue
			}
			out = append(out, struct {
				line int
				args []string
				text string
			}{contLine, words[1:], text})
		}
	}
	return out
}

// docRoot is the command tree with the flags cobra adds when it runs
// (help on every command, --version on the root).
func docRoot() *cobra.Command {
	root := newRoot(io.Discard, io.Discard)
	root.InitDefaultVersionFlag()
	var all func(*cobra.Command)
	all = func(c *cobra.Command) {
		c.InitDefaultHelpFlag()
		for _, s := range c.Commands() {
			all(s)
		}
	}
	all(root)
	return root
}

// Every relative link and anchor in README.md and docs/ resolves, none
// leaves the repository, and every loadgen command in their shell blocks
// names a command and flags that exist.
func TestDocsLinksAndCommands(t *testing.T) {
	read := func(rel string) (string, error) {
		b, err := os.ReadFile(filepath.Join(repoRoot, rel))
		return string(b), err
	}
	root := docRoot()
	files := mdFiles(t)
	if len(files) < 3 {
		t.Fatalf("only %d Markdown files found: %v", len(files), files)
	}
	nLinks, nCmds := 0, 0
	for _, f := range files {
		doc, err := read(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links(doc) {
			nLinks++
			if err := checkLink(f, l.target, read); err != nil {
				t.Errorf("%s:%d: %v", f, l.line, err)
			}
		}
		for _, c := range documentedCommands(doc) {
			nCmds++
			if err := checkCommand(root, c.args); err != nil {
				t.Errorf("%s:%d: %v: %s", f, c.line, err, c.text)
			}
		}
	}
	if nLinks == 0 || nCmds == 0 {
		t.Errorf("%d links and %d commands checked in %d files: want some of each", nLinks, nCmds, len(files))
	}
}

// The checker itself: what it takes for a link, an anchor and a command.
func TestDocsChecker(t *testing.T) {
	for heading, want := range map[string]string{
		"## `loadgen sweep`: the same target through each path": "loadgen-sweep-the-same-target-through-each-path",
		"### The cluster's own paths: `loadgen k8s paths`":      "the-clusters-own-paths-loadgen-k8s-paths",
		"## Reports, comparisons and CI checks":                 "reports-comparisons-and-ci-checks",
		"## loadgen_run [flags] *now*":                          "loadgen_run-flags-now",
		"## See [the table](x.md#y) — 2×":                       "see-the-table--2",
	} {
		m := headingRE.FindStringSubmatch(heading)
		if got := slug(m[2]); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
	doc := "# A\n## B\n## B\n```sh\n# C\n```\n<a id=\"d\"></a>\n"
	got := anchors(doc)
	for _, a := range []string{"a", "b", "b-1", "d"} {
		if !got[a] {
			t.Errorf("anchors lack %q: %v", a, got)
		}
	}
	if got["c"] {
		t.Error("a comment in a code block is taken for a heading")
	}
	ls := links("[a](x.md) `[b](y.md)` ![c](p.png \"t\") [d](https://e.org) [e](#f)\n```\n[g](z.md)\n```\n[h]: ref.md\n")
	var targets []string
	for _, l := range ls {
		targets = append(targets, l.target)
	}
	if strings.Join(targets, " ") != "x.md p.png #f ref.md" {
		t.Errorf("links: %q", targets)
	}
	read := func(string) (string, error) { return "# Top\n## Sub part\n", nil }
	for target, ok := range map[string]bool{
		"README.md": true, "docs": true, "nope.md": false, "../shared/x.md": false,
		"docs/ARCHITECTURE.md#sub-part": true, "docs/ARCHITECTURE.md#nope": false,
		"go.mod#L3": true, "go.mod#x": false,
	} {
		if err := checkLink("README.md", target, read); (err == nil) != ok {
			t.Errorf("checkLink(%q): %v, want ok %v", target, err, ok)
		}
	}
	root := docRoot()
	for line, ok := range map[string]bool{
		"loadgen run -c 50 -t 2 -d 10s --latency http://127.0.0.1:8080/get": true,
		"sudo loadgen lab --modes host-gw -o results/cni --resume":          true,
		"loadgen run -qk --json out.json https://x/":                        true,
		"loadgen run -c50 --bogus 1 http://x/":                              false,
		"loadgen run -z http://x/":                                          false,
		"loadgen serve httpbin --addr 127.0.0.1:8080 &":                     true,
		"loadgen serve nothing":                                             false,
		"loadgen sweep … --find-max --slo 'p99<10ms'":                       true,
		"loadgen k8s worker --workers 2 -- run --anything x":                true,
		"loadgen k8s run --kubeconfig K --mesh istio -f s.yaml -o d":        true,
		"loadgen report r --html r.html 2>/dev/null | head":                 true,
		"loadgen --version":                                                 true,
		"loadgen report r --htm r.html":                                     false,
	} {
		cmds := documentedCommands("```sh\n" + line + "\n```\n")
		if len(cmds) != 1 {
			t.Errorf("%q: %d commands found, want 1", line, len(cmds))
			continue
		}
		if err := checkCommand(root, cmds[0].args); (err == nil) != ok {
			t.Errorf("%q: %v, want ok %v", line, err, ok)
		}
	}
	if n := len(documentedCommands("```console\n$ loadgen run -x\nloadgen run: output\n```\n```\nloadgen run -y\n```\n")); n != 1 {
		t.Errorf("%d commands in a console block's prompt line and an untyped block, want 1", n)
	}
}
