// Package mix reads a request mix: the requests of one run, each with a
// name and a weight, from a targets file in vegeta's "http format"
// (`loadgen run --targets FILE`):
//
//	# name=search weight=3
//	GET http://127.0.0.1:8080/get?q=dragon
//	X-Account-ID: 8675309
//
//	# name=upload
//	POST http://127.0.0.1:8080/post
//	Content-Type: application/json
//	@body.json
//
// A request is a `METHOD URL` line, then its header lines (`Name: value`),
// then at most one `@path` line whose file is its body (a relative path
// from the current directory, as vegeta reads it); a blank line, or the
// next `METHOD URL` line, ends it. Lines starting with # are comments,
// but for one that gives the next request its name and weight:
// `# name=search weight=3` (either may be left out; a name with spaces in
// double quotes). Without one, a request weighs 1 and is named by its
// method and path ("GET /get"): a file vegeta reads is read as vegeta
// reads it. Requests of one name share their statistics.
//
// The requests of a mix may go to several origins (scheme, host and
// port: Origins, at most MaxHosts); each connection of a run goes to one
// of them (the engine splits the connections, loadgen/requestmix.go).
// In a mix of several origins, a request without a name is named with
// its host and port too ("GET 127.0.0.2:8080/get"), so that the same
// path on two hosts is counted apart. URLs, header values and bodies may hold fields
// ({{seq}}, {{row.COLUMN}} …: protocol.ParseTemplate), in the path and
// query only for a URL; CheckFields checks them against the --feed. A URL's user:password@ becomes a Basic Authorization
// header, as Go's client (vegeta's) sends it.
//
// The package only reads: it imports nothing of loadgen, and what it
// returns is plain data that the command line hands to the client (the
// requests) and to the engine (names and weights).
package mix

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"

	"loadgen/loadgen/protocol"
)

// Limits of a mix: a file past them is refused with what to change.
const (
	MaxRequests = 1 << 16 // requests in a file
	MaxWeight   = 1 << 20 // the sum of the weights, and so any one of them
	MaxName     = 100     // bytes of a name
	MaxHosts    = 64      // origins (scheme, host and port) in a file
)

// Request is one request of a mix.
type Request struct {
	Line     int      // the line of its METHOD URL
	Method   string   // as written (methods are case-sensitive)
	URL      string   // absolute: http:// or https://
	Headers  []string // "Name: value", in the file's order
	Body     []byte   // the @file's content; nil without one
	BodyFile string   // the @file, as written
	Name     string   // # name=…, or METHOD /path
	Weight   int      // # weight=…, or 1
	Origin   string   // scheme://host:port, lower case, the port written
}

// Mix is a targets file, read.
type Mix struct {
	File     string    // the file's name, as given (errors start with it)
	Origin   string    // scheme://host:port, the first request's
	Origins  []string  // every request's, in the order they first appear
	Requests []Request // in the file's order
}

// Error is what is wrong with a targets file, and where:
// "targets.txt:7: want "METHOD URL", got "GT /""; Line 0 for the whole file.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line == 0 {
		return e.File + ": " + e.Msg
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// Load reads a targets file, and the bodies it names from the disk.
func Load(path string) (*Mix, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--targets: %w", err)
	}
	return Parse(path, src, os.ReadFile)
}

// Parse reads src, a targets file named name; readBody reads a body's
// @file. Its error is an *Error.
func Parse(name string, src []byte, readBody func(path string) ([]byte, error)) (*Mix, error) {
	p := &parser{m: &Mix{File: name}, readBody: readBody}
	if err := p.parse(src); err != nil {
		return nil, err
	}
	return p.m, nil
}

// Weights are the requests' weights, by their order in the file.
func (m *Mix) Weights() []int {
	w := make([]int, len(m.Requests))
	for i, r := range m.Requests {
		w[i] = r.Weight
	}
	return w
}

// Names are the requests' names, by their order in the file.
func (m *Mix) Names() []string {
	n := make([]string, len(m.Requests))
	for i, r := range m.Requests {
		n[i] = r.Name
	}
	return n
}

// Where a request of the file is, line after line.
const (
	between   = iota // before the first request, or after one ended (a blank line)
	inHead           // after a METHOD URL line or one of its headers
	afterBody        // after its @file: only the next request may follow
)

type parser struct {
	m        *Mix
	readBody func(string) ([]byte, error)
	state    int
	cur      *Request
	user     *url.Userinfo // of cur's URL
	given    *directive    // the # name=… weight=… for the next request
	givenAt  int
	named    []bool // by request: named by a # name= line
	total    int    // of the weights
}

// directive is a # name=… weight=… line.
type directive struct {
	name   string
	weight int
}

func (p *parser) errf(line int, format string, a ...any) error {
	return &Error{File: p.m.File, Line: line, Msg: fmt.Sprintf(format, a...)}
}

func (p *parser) parse(src []byte) error {
	json := isJSON(src)
	for n := 1; len(src) > 0; n++ {
		var raw []byte
		if i := bytes.IndexByte(src, '\n'); i >= 0 {
			raw, src = src[:i], src[i+1:]
		} else {
			raw, src = src, nil
		}
		line := p.line
		if json {
			line = p.jsonLine
		}
		if err := line(n, string(raw)); err != nil {
			return err
		}
	}
	p.end()
	if p.given != nil {
		return p.errf(p.givenAt, "a name or weight line, but no request after it")
	}
	if len(p.m.Requests) == 0 {
		return p.errf(0, `no request: want lines of "METHOD URL" (then "Name: value" headers, an optional @body-file), a blank line between requests`)
	}
	if len(p.m.Origins) > 1 {
		p.nameHosts()
	}
	return nil
}

// nameHosts names each request of a mix of several origins that has no
// name of its own with its host and port: METHOD host:port/path.
func (p *parser) nameHosts() {
	for i := range p.m.Requests {
		r := &p.m.Requests[i]
		if p.named[i] {
			continue
		}
		u, err := url.Parse(withoutFields(r.URL))
		if err != nil {
			continue // checked when read
		}
		r.Name = defaultName(r.Method, r.URL, u, u.Host)
	}
}

func (p *parser) line(n int, raw string) error {
	if !validText(raw) {
		return p.errf(n, "not text: a control character (or invalid UTF-8) in %s", quote(raw))
	}
	line := strings.TrimSpace(raw)
	switch {
	case line == "":
		p.end()
		p.state = between
		return nil
	case line[0] == '#':
		return p.comment(n, strings.TrimSpace(line[1:]))
	case p.state == inHead && line[0] == '@':
		return p.body(n, line[1:])
	case p.state == inHead && isHeader(line):
		return p.header(n, line)
	case p.state == afterBody && (line[0] == '@' || isHeader(line)):
		return p.errf(n, "after the @body line only a blank line or the next request may come (headers go before it, one body per request), got %s", quote(line))
	}
	p.end()
	return p.request(n, line)
}

// isHeader tells a header line from a request line: a header's name holds
// no space and ends with its colon; a method is followed by a space.
func isHeader(line string) bool {
	i := strings.IndexAny(line, ": \t")
	return i >= 0 && line[i] == ':'
}

// request starts the request of a METHOD URL line.
func (p *parser) request(n int, line string) error {
	if len(p.m.Requests) == MaxRequests {
		return p.errf(n, "more than %d requests: a mix has at most %d (weights repeat a request without repeating its lines)", MaxRequests, MaxRequests)
	}
	method, raw, _ := strings.Cut(strings.ReplaceAll(line, "\t", " "), " ")
	raw = strings.TrimSpace(raw)
	if !protocol.IsToken(method) || !strings.Contains(raw, "://") || strings.ContainsAny(withoutFields(raw), " \t") {
		return p.errf(n, `want "METHOD URL", got %s`, quote(line))
	}
	if scheme, rest, _ := strings.Cut(raw, "://"); protocol.HasTemplate(scheme) || strings.Contains(rest, "{{") && strings.Index(rest, "{{") < authorityEnd(rest) {
		return p.errf(n, "URL %s: a field in the scheme or host: the requests of a mix share one connection pool (one scheme, host and port); fields go in the path and query", quote(raw))
	}
	u, err := url.Parse(withoutFields(raw))
	switch {
	case err != nil:
		return p.errf(n, "malformed URL %s: %v", quote(raw), errors.Unwrap(err))
	case u.Scheme != "http" && u.Scheme != "https":
		return p.errf(n, "URL %s: want http:// or https://", quote(raw))
	case u.Opaque != "" || u.Hostname() == "":
		return p.errf(n, "URL %s has no host: want %s://host[:port]/path", quote(raw), u.Scheme)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	} else if v, err := strconv.Atoi(port); err != nil || v < 1 || v > 65535 {
		return p.errf(n, "URL %s: port %q out of range 1-65535", quote(raw), port)
	}
	origin := u.Scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
	if len(p.m.Requests) == 0 {
		p.m.Origin = origin
	}
	if !slices.Contains(p.m.Origins, origin) {
		if len(p.m.Origins) == MaxHosts {
			return p.errf(n, "%s goes to a host past the %d a mix may load (scheme, host and port): split the file", quote(raw), MaxHosts)
		}
		p.m.Origins = append(p.m.Origins, origin)
	}
	p.user = u.User
	if u.User != nil {
		u.User = nil
		raw = u.String()
	}
	r := Request{Line: n, Method: method, URL: raw, Name: defaultName(method, raw, u, ""), Weight: 1, Origin: origin}
	named := false
	if d := p.given; d != nil {
		if d.name != "" {
			r.Name, named = d.name, true
		}
		if d.weight > 0 {
			r.Weight = d.weight
		}
		p.given = nil
	}
	if p.total += r.Weight; p.total > MaxWeight {
		return p.errf(n, "the weights add up to more than %d: make them smaller (only their ratios matter)", MaxWeight)
	}
	p.m.Requests = append(p.m.Requests, r)
	p.named = append(p.named, named)
	p.cur, p.state = &p.m.Requests[len(p.m.Requests)-1], inHead
	return nil
}

// defaultName is METHOD /path, or METHOD host:port/path with a host
// (a mix of several origins): the query is left out, so that the
// requests of one endpoint share their statistics. A path with fields is
// named as written ("GET /users/{{seq}}").
func defaultName(method, raw string, u *url.URL, host string) string {
	path := u.EscapedPath()
	if protocol.HasTemplate(raw) {
		_, rest, _ := strings.Cut(raw, "://")
		rest = rest[authorityEnd(rest):]
		path, _, _ = strings.Cut(rest, "?")
		path, _, _ = strings.Cut(path, "#")
	}
	if path == "" {
		path = "/"
	}
	name := method + " " + host + path
	if len(name) > MaxName {
		name = name[:MaxName-3] + "..."
	}
	return name
}

// authorityEnd is where a URL's host and port end in rest, the URL after
// its "://".
func authorityEnd(rest string) int {
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		return i
	}
	return len(rest)
}

// withoutFields is s with each field ({{…}}) as "x": what the URL's
// checks parse.
func withoutFields(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			break
		}
		j := strings.Index(s[i:], "}}")
		if j < 0 {
			break
		}
		b.WriteString(s[:i])
		b.WriteString("x")
		s = s[i+j+2:]
	}
	b.WriteString(s)
	return b.String()
}

// CheckFields checks the fields ({{seq}}, {{row.COLUMN}} …) of every
// request's URL, headers and body (when it is text) against feed, the
// --feed rows (nil without): the first wrong one is the error, with its
// request's line.
func (m *Mix) CheckFields(feed *protocol.Feed) error {
	for _, r := range m.Requests {
		texts := append([]string{r.URL}, r.Headers...)
		for i, t := range texts {
			if !protocol.HasTemplate(t) {
				continue
			}
			if _, err := protocol.ParseTemplate(t, feed); err != nil {
				what := "the URL"
				if i > 0 {
					what = "header " + quote(t)
				}
				return &Error{File: m.File, Line: r.Line, Msg: what + ": " + err.Error()}
			}
		}
		if protocol.BodyHasTemplate(r.Body) {
			if _, err := protocol.ParseTemplate(string(r.Body), feed); err != nil {
				return &Error{File: m.File, Line: r.Line, Msg: "the body (" + r.BodyFile + "): " + err.Error()}
			}
		}
	}
	return nil
}

func (p *parser) header(n int, line string) error {
	name, value, _ := strings.Cut(line, ":")
	value = strings.TrimSpace(value)
	if !protocol.IsToken(name) {
		return p.errf(n, `want a header "Name: value", an @body-file or a blank line, got %s`, quote(line))
	}
	p.cur.Headers = append(p.cur.Headers, name+": "+value)
	return nil
}

func (p *parser) body(n int, path string) error {
	path = strings.TrimSpace(path)
	if path == "" {
		return p.errf(n, "@ without a file: want @path/to/body")
	}
	b, err := p.readBody(path)
	if err != nil {
		return p.errf(n, "the body: %v", err)
	}
	if b == nil {
		b = []byte{}
	}
	p.cur.Body, p.cur.BodyFile, p.state = b, path, afterBody
	return nil
}

// end ends the current request, if any: its URL's credentials become its
// Authorization header, unless it has one.
func (p *parser) end() {
	r, user := p.cur, p.user
	p.cur, p.user = nil, nil
	if r == nil || user == nil {
		return
	}
	for _, h := range r.Headers {
		if name, _, _ := strings.Cut(h, ":"); strings.EqualFold(name, "Authorization") {
			return
		}
	}
	pw, _ := user.Password()
	cred := base64.StdEncoding.EncodeToString([]byte(user.Username() + ":" + pw))
	r.Headers = append(r.Headers, "Authorization: Basic "+cred)
}
