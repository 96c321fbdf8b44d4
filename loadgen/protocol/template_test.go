package protocol_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"loadgen/loadgen/protocol"
)

func testFeed(t testing.TB) *protocol.Feed {
	t.Helper()
	f, err := protocol.ParseFeed("users.csv", []byte("user,token\nada,t1\n\"bob, jr\",t2\ncy,t3\n"))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestTemplateRendersEachField(t *testing.T) {
	feed := testFeed(t)
	tp, err := protocol.ParseTemplate(`/u/{{ seq }}/{{row.user}}?t={{row.token}}&r={{rand 3}}&id={{uuid}}&at={{now}}&lit={{"{{x}}"}}`, feed)
	if err != nil {
		t.Fatal(err)
	}
	if tp.Static() || tp.Uses() != protocol.UsesSeq|protocol.UsesRow|protocol.UsesNow {
		t.Fatalf("Static %v, Uses %b", tp.Static(), tp.Uses())
	}
	re := regexp.MustCompile(`^/u/(\d+)/([^?]+)\?t=(t\d)&r=(\d+)&id=([0-9a-f-]{36})&at=(\d+)&lit=\{\{x\}\}$`)
	v := protocol.NewVars(feed)
	users := []string{"ada", "bob, jr", "cy"}
	before := time.Now().UnixMilli()
	for i := range 7 {
		d := v.Draw(tp.Uses())
		out := string(tp.Append(nil, &d))
		m := re.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("request %d rendered %q", i, out)
		}
		if m[1] != strconv.Itoa(i+1) {
			t.Errorf("request %d: seq %s, want %d", i, m[1], i+1)
		}
		if m[2] != users[i%3] || m[3] != "t"+strconv.Itoa(i%3+1) {
			t.Errorf("request %d: row %s,%s, want row %d", i, m[2], m[3], i%3+1)
		}
		if r, _ := strconv.Atoi(m[4]); r < 0 || r > 2 {
			t.Errorf("rand 3 gave %d", r)
		}
		if !validUUID(m[5]) {
			t.Errorf("not a v4 UUID: %s", m[5])
		}
		if at, _ := strconv.ParseInt(m[6], 10, 64); at < before || at > time.Now().UnixMilli() {
			t.Errorf("now %d not within the test's run", at)
		}
	}
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

func validUUID(s string) bool { return uuidRE.MatchString(s) }

func TestTemplateUUIDsDistinct(t *testing.T) {
	tp, err := protocol.ParseTemplate("{{uuid}}", nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var d protocol.Draw
	for range 10000 {
		u := string(tp.Append(nil, &d))
		if !validUUID(u) || seen[u] {
			t.Fatalf("uuid %q: valid %v, seen before %v", u, validUUID(u), seen[u])
		}
		seen[u] = true
	}
}

func TestTemplateWithoutFieldsIsStatic(t *testing.T) {
	for _, s := range []string{"", "/get?a=1", "a } b }} c {", `{{"{{"}}`} {
		tp, err := protocol.ParseTemplate(s, nil)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if !tp.Static() || tp.Uses() != 0 {
			t.Errorf("%q: Static %v Uses %b", s, tp.Static(), tp.Uses())
		}
	}
}

func TestTemplateErrors(t *testing.T) {
	feed := testFeed(t)
	for _, c := range []struct {
		in   string
		feed *protocol.Feed
		want string
	}{
		{"/a/{{seq", feed, "is not closed"},
		{"/a/{{seq}", feed, "is not closed"},
		{"/a/{{ {{seq}}", feed, "is not closed"},
		{"/{{nope}}", feed, `unknown field "nope"`},
		{"/{{}}", feed, "is empty"},
		{"/{{rand}}", feed, "want {{rand N}}"},
		{"/{{rand 0}}", feed, "want {{rand N}}"},
		{"/{{rand -3}}", feed, "want {{rand N}}"},
		{"/{{rand x}}", feed, "want {{rand N}}"},
		{"/{{seq 3}}", feed, "seq takes no argument"},
		{"/{{row.user}}", nil, "--feed FILE"},
		{"/{{row.email}}", feed, `users.csv has no column "email" (its columns: user, token)`},
		{`/{{"abc}}`, feed, "is not closed"},
		{`/{{"a\q"}}`, feed, "malformed quoted text"},
	} {
		_, err := protocol.ParseTemplate(c.in, c.feed)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line with %q", c.in, err, c.want)
		}
	}
}

func TestFeedErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"", "empty"},
		{"a,b\n", "no row under the header"},
		{"a,b\n1,2\n3\n", "line 3: a row's field count differs"},
		{"a,a\n1,2\n", `column "a" named twice`},
		{"a,\n1,2\n", "column 2 has no name"},
		{"a b\n1\n", "holds no space"},
		{"a\n\"x\n", "line 2"},
		{"a\n\xff\n", "not UTF-8"},
	} {
		_, err := protocol.ParseFeed("f.csv", []byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "f.csv") {
			t.Errorf("%q: error %v, want %q", c.src, err, c.want)
		}
	}
}

// TestTemplateAppendAllocatesNothing checks that rendering into a buffer with
// room allocates nothing, whatever the fields.
func TestTemplateAppendAllocatesNothing(t *testing.T) {
	feed := testFeed(t)
	tp, err := protocol.ParseTemplate(`{{seq}} {{uuid}} {{rand 100}} {{now}} {{row.user}}`, feed)
	if err != nil {
		t.Fatal(err)
	}
	v := protocol.NewVars(feed)
	buf := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(1000, func() {
		d := v.Draw(tp.Uses())
		buf = tp.Append(buf[:0], &d)
	}); n != 0 {
		t.Errorf("%v allocations per render, want 0", n)
	}
}

// FuzzParseTemplate checks that any text parses or fails with one line, never
// panics; what parses renders, and a text without "{{" renders as itself.
func FuzzParseTemplate(f *testing.F) {
	for _, s := range []string{
		"", "/get", "/u/{{seq}}", "{{uuid}}-{{rand 10}}", "{{now}}", "{{row.user}}", "{{row.nope}}",
		`{{"{{"}}`, "{{", "}}", "{{}}", "{{rand 4611686018427387904}}", "{{ seq }}{{seq}}", `{{"\"}}"}}`,
		"a{{b{{c}}d}}", "{{rand 1}}",
	} {
		f.Add(s)
	}
	feed := testFeed(f)
	f.Fuzz(func(t *testing.T, s string) {
		tp, err := protocol.ParseTemplate(s, feed)
		if err != nil {
			if strings.Contains(err.Error(), "\n") && !strings.Contains(s, "\n") {
				t.Fatalf("%q: a multi-line error %q", s, err)
			}
			return
		}
		v := protocol.NewVars(feed)
		d := v.Draw(tp.Uses())
		out := tp.Append(nil, &d)
		if !protocol.HasTemplate(s) && string(out) != s {
			t.Fatalf("%q rendered %q", s, out)
		}
		if tp.Static() && string(tp.Append(nil, &d)) != string(out) {
			t.Fatalf("%q: static, yet it rendered %q then something else", s, out)
		}
	})
}

// BenchmarkTemplateAppend renders a typical request head with four fields.
func BenchmarkTemplateAppend(b *testing.B) {
	feed := testFeed(b)
	tp, err := protocol.ParseTemplate("POST /users/{{row.user}}?seq={{seq}}&r={{rand 100}} HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-Request-Id: {{uuid}}\r\nUser-Agent: loadgen\r\n", feed)
	if err != nil {
		b.Fatal(err)
	}
	v := protocol.NewVars(feed)
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		d := v.Draw(tp.Uses())
		buf = tp.Append(buf[:0], &d)
	}
}
