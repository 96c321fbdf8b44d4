package mix

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"loadgen/loadgen/protocol"
)

// bodies is a readBody over a map: "missing" is not there.
func bodies(files map[string]string) func(string) ([]byte, error) {
	return func(path string) ([]byte, error) {
		b, ok := files[path]
		if !ok {
			return nil, fmt.Errorf("open %s: %w", path, os.ErrNotExist)
		}
		return []byte(b), nil
	}
}

// A vegeta file reads as vegeta reads it — requests, headers, bodies,
// comments, blank lines — each request weighing 1 and named by its
// method and path; name lines give names and weights.
func TestParse(t *testing.T) {
	src := `# vegeta's own examples, on one host
GET http://goku:9090/path/to/dragon?item=ball
X-Account-ID: 8675309

# a comment between requests
DELETE http://goku:9090/path/to/remove
Confirmation-Token: 90215
Authorization: Token DEADBEEF

# name=create weight=3
POST http://goku:9090/things
X-Account-ID: 99
@/path/to/newthing.json

# name="read it back" weight=2
GET http://goku:9090/things?id=1
GET http://user:secret@goku:9090/path/to
HEAD http://GOKU:9090/path/to/success
`
	m, err := Parse("targets.txt", []byte(src), bodies(map[string]string{"/path/to/newthing.json": `{"a":1}`}))
	if err != nil {
		t.Fatal(err)
	}
	want := []Request{
		{Line: 2, Method: "GET", URL: "http://goku:9090/path/to/dragon?item=ball", Headers: []string{"X-Account-ID: 8675309"}, Name: "GET /path/to/dragon", Weight: 1, Origin: "http://goku:9090"},
		{Line: 6, Method: "DELETE", URL: "http://goku:9090/path/to/remove", Headers: []string{"Confirmation-Token: 90215", "Authorization: Token DEADBEEF"}, Name: "DELETE /path/to/remove", Weight: 1, Origin: "http://goku:9090"},
		{Line: 11, Method: "POST", URL: "http://goku:9090/things", Headers: []string{"X-Account-ID: 99"}, Body: []byte(`{"a":1}`), BodyFile: "/path/to/newthing.json", Name: "create", Weight: 3, Origin: "http://goku:9090"},
		{Line: 16, Method: "GET", URL: "http://goku:9090/things?id=1", Name: "read it back", Weight: 2, Origin: "http://goku:9090"},
		{Line: 17, Method: "GET", URL: "http://goku:9090/path/to", Headers: []string{"Authorization: Basic dXNlcjpzZWNyZXQ="}, Name: "GET /path/to", Weight: 1, Origin: "http://goku:9090"},
		{Line: 18, Method: "HEAD", URL: "http://GOKU:9090/path/to/success", Name: "HEAD /path/to/success", Weight: 1, Origin: "http://goku:9090"},
	}
	if !reflect.DeepEqual(m.Requests, want) {
		t.Errorf("requests:\n got %+v\nwant %+v", m.Requests, want)
	}
	if m.Origin != "http://goku:9090" {
		t.Errorf("origin %q", m.Origin)
	}
	if w := m.Weights(); !reflect.DeepEqual(w, []int{1, 1, 3, 2, 1, 1}) {
		t.Errorf("weights %v", w)
	}
	if n := m.Names(); n[2] != "create" || n[0] != "GET /path/to/dragon" {
		t.Errorf("names %v", n)
	}
}

// Line endings, a missing final newline and default ports do not matter.
func TestParseLenient(t *testing.T) {
	m, err := Parse("t", []byte("GET http://h/a\r\nX: 1\r\n\r\nGET http://h:80/b"), bodies(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Requests) != 2 || m.Requests[0].Headers[0] != "X: 1" || m.Origin != "http://h:80" || m.Requests[1].Name != "GET /b" {
		t.Errorf("%+v", m)
	}
	m, err = Parse("t", []byte("GET https://h/\n"), bodies(nil))
	if err != nil || m.Origin != "https://h:443" || m.Requests[0].Name != "GET /" {
		t.Errorf("%+v %v", m, err)
	}
}

// A bad file is refused with its line and what is wrong with it.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"", `t: no request: want lines of "METHOD URL"`},
		{"# only a comment\n\n", `t: no request`},
		{"GET http://h/\n\nGT/ http://h/\n", `t:3: want "METHOD URL", got "GT/ http://h/"`},
		{"GET\n", `t:1: want "METHOD URL", got "GET"`},
		{"GET /relative\n", `t:1: want "METHOD URL", got "GET /relative"`},
		{"GET http://h/ extra\n", `t:1: want "METHOD URL"`},
		{"GET ftp://h/\n", `t:1: URL "ftp://h/": want http:// or https://`},
		{"GET http:///x\n", `t:1: URL "http:///x" has no host`},
		{"GET http://h:99999/\n", `t:1: URL "http://h:99999/": port "99999" out of range`},
		{"GET http://h/%zz\n", `t:1: malformed URL "http://h/%zz"`},
		{"GET http://h/\nBad Header: x\n", `t:2: want "METHOD URL", got "Bad Header: x"`},
		{"GET http://h/\nBad/Header: x\n", `t:2: want a header "Name: value", an @body-file or a blank line, got "Bad/Header: x"`},
		{"X-Header: 1\n", `t:1: want "METHOD URL", got "X-Header: 1"`},
		{"GET http://h/\n@\n", `t:2: @ without a file`},
		{"GET http://h/\n@missing\n", `t:2: the body: open missing: file does not exist`},
		{"POST http://h/\n@b\nX: 1\n", `t:3: after the @body line only a blank line or the next request may come`},
		{"POST http://h/\n@b\n@b\n", `t:3: after the @body line`},
		{"@b\n", `t:1: want "METHOD URL", got "@b"`},
		{"# weight=0\nGET http://h/\n", `t:1: weight=0: want a whole number from 1 to 1048576`},
		{"# weight=x\nGET http://h/\n", `t:1: weight=x: want a whole number`},
		{"# weight=1048577\nGET http://h/\n", `t:1: weight=1048577`},
		{"# name=a weight=1 colour=red\nGET http://h/\n", `t:1: want name=NAME and weight=N on a name line, got "colour=red"`},
		{"# name=a name=b\nGET http://h/\n", `t:1: name given twice`},
		{"# name=\nGET http://h/\n", `t:1: name="": a name has 1 to 100 bytes`},
		{`# name="open` + "\nGET http://h/\n", `t:1: name: a quote that does not end`},
		{`# name="a"b` + "\nGET http://h/\n", `t:1: name: want a space after "\"a\""`},
		{"# name=a\n# weight=2\nGET http://h/\n", `t:2: a second name or weight line (line 1 gave one) before a request`},
		{"GET http://h/\n# name=a\n", `t:2: a name or weight line, but no request after it`},
		{"# weight=1000000\nGET http://h/\n# weight=1000000\nGET http://h/\n", `t:4: the weights add up to more than 1048576`},
		{"GET http://h/\x00\n", `t:1: not text: a control character`},
		{"GET http://h/\xff\n", `t:1: not text`},
	} {
		_, err := Parse("t", []byte(tc.src), bodies(map[string]string{"b": "x"}))
		var pe *Error
		if err == nil || !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q:\n got %v\nwant %s…", tc.src, err, tc.want)
		}
	}
}

// A name line may hold a name or a weight alone, in either order; a name
// with spaces is quoted; other comments are comments.
func TestParseNameLines(t *testing.T) {
	src := "# weight=2\nGET http://h/a\n\n#   weight=5   name=\"b c\"  \nGET http://h/b\n# named things are fine\n#name=d\nGET http://h/d\n"
	m, err := Parse("t", []byte(src), bodies(nil))
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(m.Names(), m.Weights())
	if want := "[GET /a b c d] [2 5 1]"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// Too many requests are refused at the first one too many.
func TestParseTooMany(t *testing.T) {
	src := strings.Repeat("GET http://h/\n", MaxRequests+1)
	_, err := Parse("t", []byte(src), bodies(nil))
	if err == nil || !strings.HasPrefix(err.Error(), fmt.Sprintf("t:%d: more than %d requests", MaxRequests+1, MaxRequests)) {
		t.Errorf("got %v", err)
	}
}

// Load reads the file and its bodies from the disk, relative paths from
// the current directory, as vegeta does.
func TestLoad(t *testing.T) {
	dir := t.TempDir()
	body := filepath.Join(dir, "body.json")
	if err := os.WriteFile(body, []byte(`{}`), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "targets.txt")
	if err := os.WriteFile(path, []byte("POST http://127.0.0.1:8080/post\n@"+body+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := Load(path)
	if err != nil || string(m.Requests[0].Body) != `{}` {
		t.Fatalf("%+v %v", m, err)
	}
	if _, err := Load(filepath.Join(dir, "none")); err == nil || !strings.Contains(err.Error(), "--targets") {
		t.Errorf("a missing file: %v", err)
	}
}

// FuzzParse checks that, whatever the file, Parse returns a mix that holds
// (valid methods, absolute URLs on one origin, headers that are headers,
// positive weights within the limit, names) or an error that says where.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"GET http://h/\n",
		"# name=a weight=3\nPOST http://h:8080/p?q=1\nContent-Type: x\n@b\n\nGET http://h:8080/\n",
		"GET http://u:p@h/x\nAuthorization: y\n\nHEAD http://h/\r\n",
		"# weight=2\n\n# x\nGET https://[::1]:8443/a%20b\n",
		"GET http://h/\n@\n", "#name=\"a b\"\nGET http://h/\n", "X: y\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		m, err := Parse("t", []byte(src), bodies(map[string]string{"b": "body"}))
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), "t:") || pe.Msg == "" {
				t.Fatalf("error %q is not an *Error that says where", err)
			}
			if pe.Line < 0 || pe.Line > strings.Count(src, "\n")+1 {
				t.Fatalf("error at line %d of a file of %d lines", pe.Line, strings.Count(src, "\n")+1)
			}
			return
		}
		if len(m.Requests) == 0 || len(m.Requests) > MaxRequests {
			t.Fatalf("%d requests", len(m.Requests))
		}
		total := 0
		for _, r := range m.Requests {
			if !protocol.IsToken(r.Method) || r.Weight < 1 || r.Name == "" || len(r.Name) > MaxName {
				t.Fatalf("bad request %+v", r)
			}
			total += r.Weight
			u, err := url.Parse(r.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.User != nil {
				t.Fatalf("bad URL %q: %v", r.URL, err)
			}
			for _, h := range r.Headers {
				name, _, ok := strings.Cut(h, ": ")
				if !ok || !protocol.IsToken(name) || strings.ContainsAny(h, "\r\n\x00") {
					t.Fatalf("bad header %q", h)
				}
			}
		}
		if total > MaxWeight {
			t.Fatalf("weights add up to %d", total)
		}
	})
}

// vegeta's JSON format reads as its http format does: one object a
// line, headers in their names' order, the body base64; loadgen's name
// and weight; blank and # lines between.
func TestParseJSON(t *testing.T) {
	src := `
# vegeta's JSON format
{"method":"POST","url":"http://goku:9090/things","header":{"X-B":["2"],"X-A":["1","3"]},"body":"eyJhIjoxfQ==","name":"create","weight":3}

{"url":"http://user:secret@goku:9090/path/to?q=1"}
`
	m, err := Parse("targets.json", []byte(src), bodies(nil))
	if err != nil {
		t.Fatal(err)
	}
	want := []Request{
		{Line: 3, Method: "POST", URL: "http://goku:9090/things", Headers: []string{"X-A: 1", "X-A: 3", "X-B: 2"}, Body: []byte(`{"a":1}`), Name: "create", Weight: 3, Origin: "http://goku:9090"},
		{Line: 5, Method: "GET", URL: "http://goku:9090/path/to?q=1", Headers: []string{"Authorization: Basic dXNlcjpzZWNyZXQ="}, Name: "GET /path/to", Weight: 1, Origin: "http://goku:9090"},
	}
	if !reflect.DeepEqual(m.Requests, want) {
		t.Errorf("got  %+v\nwant %+v", m.Requests, want)
	}
	for _, c := range []struct{ src, want string }{
		{`{"url":"http://a/"} {"url":"http://a/"}`, "targets.json:1: more than one JSON object"},
		{"{\"url\":\"http://a/\"}\n{\"url\":\"http://a/\",\"weight\":0}", "targets.json:2: weight 0"},
		{`{"url":"http://a/","body":"!!"}`, "targets.json:1: want one JSON object a line"},
		{`{"url":"http://a/","header":{"X":["a` + "\\n" + `b"]}}`, "targets.json:1: header \"X\": a control character"},
		{"{\"url\":\"http://a/\"}\nGET http://a/", "targets.json:2: want one JSON object a line"},
	} {
		_, err := Parse("targets.json", []byte(c.src), bodies(nil))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.src, err, c.want)
		}
	}
}

// A URL with fields may hold spaces inside them; its default name is its
// path as written; fields are checked against the feed with the
// request's line.
func TestParseFields(t *testing.T) {
	src := "GET http://goku:9090/u/{{rand 10}}?id={{seq}}\n\nPOST http://goku:9090/p\nX-Id: {{row.id}}\n"
	m, err := Parse("targets.txt", []byte(src), bodies(nil))
	if err != nil {
		t.Fatal(err)
	}
	if r := m.Requests[0]; r.URL != "http://goku:9090/u/{{rand 10}}?id={{seq}}" || r.Name != "GET /u/{{rand 10}}" {
		t.Errorf("request 1: %+v", r)
	}
	if err := m.CheckFields(nil); err == nil || !strings.HasPrefix(err.Error(), `targets.txt:3: header "X-Id: {{row.id}}": `) {
		t.Errorf("{{row.id}} without a feed: %v", err)
	}
	feed, err := protocol.ParseFeed("ids.csv", []byte("id\n7\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CheckFields(feed); err != nil {
		t.Errorf("with a feed of ids: %v", err)
	}
	for _, c := range []struct{ src, want string }{
		{"GET http://{{row.h}}:80/\n", "targets.txt:1: URL \"http://{{row.h}}:80/\": a field in the scheme or host"},
		{"GET http://a/x y\n", `targets.txt:1: want "METHOD URL"`},
	} {
		_, err := Parse("targets.txt", []byte(c.src), bodies(nil))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.src, err, c.want)
		}
	}
}

// A mix may go to several origins: each request keeps its own, a
// request without a name is named with its host and port, and past
// MaxHosts origins the file is refused.
func TestParseHosts(t *testing.T) {
	src := `GET http://127.0.0.1:8080/get?q=1
# name=upload weight=3
POST https://b.example/post
GET http://127.0.0.2:8080/get
GET http://127.0.0.1:8080/get
`
	m, err := Parse("t", []byte(src), bodies(nil))
	if err != nil {
		t.Fatal(err)
	}
	origins := []string{"http://127.0.0.1:8080", "https://b.example:443", "http://127.0.0.2:8080"}
	if !reflect.DeepEqual(m.Origins, origins) || m.Origin != origins[0] {
		t.Errorf("origins %q (first %q), want %q", m.Origins, m.Origin, origins)
	}
	for i, want := range []int{0, 1, 2, 0} {
		if o := m.Requests[i].Origin; o != origins[want] {
			t.Errorf("request %d's origin %q, want %q", i, o, origins[want])
		}
	}
	names := []string{"GET 127.0.0.1:8080/get", "upload", "GET 127.0.0.2:8080/get", "GET 127.0.0.1:8080/get"}
	if n := m.Names(); !reflect.DeepEqual(n, names) {
		t.Errorf("names %q, want %q", n, names)
	}
	var many strings.Builder
	for i := range MaxHosts + 1 {
		fmt.Fprintf(&many, "GET http://127.0.0.1:%d/\n", 1000+i)
	}
	_, err = Parse("t", []byte(many.String()), bodies(nil))
	if want := fmt.Sprintf("t:%d: \"http://127.0.0.1:%d/\" goes to a host past the %d", MaxHosts+1, 1000+MaxHosts, MaxHosts); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("%d hosts: %v, want %s…", MaxHosts+1, err, want)
	}
}
