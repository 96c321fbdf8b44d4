package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// recorder is a target that keeps what each request carried.
type recorder struct {
	*httptest.Server
	mu  sync.Mutex
	got []recorded
}

type recorded struct{ path, id, body string }

func newRecorder(t *testing.T) *recorder {
	t.Helper()
	r := &recorder{}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, recorded{req.URL.RequestURI(), req.Header.Get("X-Id"), string(b)})
		r.mu.Unlock()
	}))
	r.Config.Protocols = new(http.Protocols)
	r.Config.Protocols.SetHTTP1(true)
	r.Config.Protocols.SetUnencryptedHTTP2(true)
	r.Start()
	t.Cleanup(r.Close)
	return r
}

func (r *recorder) requests() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.got...)
}

func writeTemp(t *testing.T, name, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

var uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// loadgen run with fields in the URL, a header and the body, rows from
// --feed: the target receives exactly the rendered values — seqs 1…N
// once each across the connections, each row equally often, distinct
// UUIDs, a body with the seq of its URL — from the command line (HTTP/1.1
// and h2c, both drivers), a targets file in vegeta's http format and one
// in its JSON format.
func TestFieldsRun(t *testing.T) {
	feed := writeTemp(t, "users.csv", "user,plan\nada,pro\nbob,free\n\"cy\",pro\n")
	for _, tc := range []struct {
		name string
		args func(base string) []string
	}{
		{"command line/loop", func(base string) []string {
			return []string{base + "/u/{{seq}}/{{row.user}}?plan={{row.plan}}", "-H", "X-Id: {{uuid}}", "--body", `{"n":{{seq}},"r":{{rand 7}}}`, "--driver", "loop"}
		}},
		{"command line/goroutines", func(base string) []string {
			return []string{base + "/u/{{seq}}/{{row.user}}?plan={{row.plan}}", "-H", "X-Id: {{uuid}}", "--body", `{"n":{{seq}},"r":{{rand 7}}}`, "--driver", "goroutines"}
		}},
		{"targets file", func(base string) []string {
			body := writeTemp(t, "body.json", `{"n":{{seq}},"r":{{rand 7}}}`)
			return []string{"--targets", writeTemp(t, "targets.txt", "# name=user\nPOST "+base+"/u/{{seq}}/{{row.user}}?plan={{row.plan}}\nX-Id: {{ uuid }}\n@"+body+"\n")}
		}},
		{"h2c/loop", func(base string) []string {
			return []string{base + "/u/{{seq}}/{{row.user}}?plan={{row.plan}}", "-p", "h2c", "-m", "4", "-H", "X-Id: {{uuid}}", "--body", `{"n":{{seq}},"r":{{rand 7}}}`, "--driver", "loop"}
		}},
		{"h2c/goroutines", func(base string) []string {
			return []string{base + "/u/{{seq}}/{{row.user}}?plan={{row.plan}}", "-p", "h2c", "-m", "4", "-H", "X-Id: {{uuid}}", "--body", `{"n":{{seq}},"r":{{rand 7}}}`, "--driver", "goroutines"}
		}},
		{"targets file/h2c", func(base string) []string {
			body := writeTemp(t, "body.json", `{"n":{{seq}},"r":{{rand 7}}}`)
			return []string{"-p", "h2c", "-m", "2", "--targets", writeTemp(t, "targets.txt", "# name=user\nPOST "+base+"/u/{{seq}}/{{row.user}}?plan={{row.plan}}\nX-Id: {{ uuid }}\n@"+body+"\n")}
		}},
		{"JSON targets file", func(base string) []string {
			// body: base64 of {"n":{{seq}},"r":{{rand 7}}}
			return []string{"--targets", writeTemp(t, "targets.json",
				`{"method":"POST","url":"`+base+`/u/{{seq}}/{{row.user}}?plan={{row.plan}}","header":{"X-Id":["{{uuid}}"]},"body":"eyJuIjp7e3NlcX19LCJyIjp7e3JhbmQgN319fQ=="}`+"\n")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRecorder(t)
			out := filepath.Join(t.TempDir(), "run.json")
			args := append([]string{"run", "-c", "3", "-n", "300", "--feed", feed, "--json", out}, tc.args(srv.URL)...)
			code, stdout, stderr := cli(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
			}
			if b, err := os.ReadFile(out); err != nil || !strings.Contains(string(b), `"feed": "`+feed+`"`) {
				t.Errorf("the result does not record the feed (config.feed %q): %v\n%.400s", feed, err, b)
			}
			got := srv.requests()
			if len(got) != 300 {
				t.Fatalf("the target got %d requests, want 300", len(got))
			}
			path := regexp.MustCompile(`^/u/(\d+)/(ada|bob|cy)\?plan=(pro|free)$`)
			body := regexp.MustCompile(`^\{"n":(\d+),"r":[0-6]\}$`)
			seqs, ids, rows := map[int]bool{}, map[string]bool{}, map[string]int{}
			for _, g := range got {
				m, b := path.FindStringSubmatch(g.path), body.FindStringSubmatch(g.body)
				if m == nil || b == nil || m[1] != b[1] {
					t.Fatalf("request %s with body %q: not the rendered URL and body, or two seqs", g.path, g.body)
				}
				seq, _ := strconv.Atoi(m[1])
				if seqs[seq] || seq < 1 || seq > 300 {
					t.Errorf("seq %d repeated or out of 1-300", seq)
				}
				seqs[seq] = true
				if ids[g.id] || !uuidV4.MatchString(g.id) {
					t.Errorf("X-Id %q repeated or not a v4 UUID", g.id)
				}
				ids[g.id] = true
				rows[m[2]+","+m[3]]++
			}
			for _, row := range []string{"ada,pro", "bob,free", "cy,pro"} {
				if rows[row] != 100 {
					t.Errorf("row %s taken %d times of 300, want 100 (all: %v)", row, rows[row], rows)
				}
			}
		})
	}
}

// A field that cannot be rendered is a one-line error and exit 2, before
// any load.
func TestFieldsBadInput(t *testing.T) {
	srv := newRecorder(t)
	base := srv.URL
	feed := writeTemp(t, "users.csv", "user\nada\n")
	for _, tc := range []struct {
		name string
		args []string
		msg  string
	}{
		{"unknown field", []string{base + "/{{nope}}"}, `"{{nope}}": unknown field "nope"`},
		{"unclosed", []string{base + "/{{seq"}, `"{{seq" is not closed`},
		{"unclosed in a header", []string{base + "/", "-H", "X-Id: {{uuid"}, `header "X-Id: {{uuid": "{{uuid" is not closed`},
		{"unclosed in the body", []string{base + "/", "--body", "{{seq"}, `the body: "{{seq" is not closed`},
		{"row without --feed", []string{base + "/{{row.user}}"}, "give one with --feed FILE"},
		{"a column the CSV lacks", []string{base + "/{{row.email}}", "--feed", feed}, `has no column "email" (its columns: user)`},
		{"a space in a row, in the URL", []string{base + "/{{row.user}}", "--feed", writeTemp(t, "sp.csv", "user\nada b\n")}, `sp.csv: row 1: column user holds "ada b", which a URL cannot carry: percent-encode it in the file`},
		{"a space in the URL", []string{base + "/a b/{{seq}}"}, "holds a space or a control character: percent-encode it"},
		{"rand without N", []string{base + "/{{rand}}"}, "want {{rand N}}"},
		{"field in the host", []string{"http://{{row.user}}:8080/", "--feed", feed}, "a field in the host"},
		{"content-length with a body that varies, h2c", []string{base + "/", "-p", "h2c", "--body", "{{seq}}", "-H", "Content-Length: 1"}, "a content-length header with a body that varies: leave it out"},
		{"over tcp", []string{"127.0.0.1:1", "-p", "tcp-rr", "-H", "X: {{seq}}"}, "fields ({{seq}}, {{row.COLUMN}} …) in the URL, headers or body are for -p http1, h2 and h2c"},
		{"--feed over grpc", []string{"127.0.0.1:1", "-p", "grpc", "--feed", feed}, "--feed gives rows"},
		{"no feed file", []string{base + "/", "--feed", "/nonexistent/users.csv"}, "--feed: open /nonexistent/users.csv"},
		{"empty feed", []string{base + "/", "--feed", writeTemp(t, "empty.csv", "user\n")}, "no row under the header line"},
		{"ragged feed", []string{base + "/", "--feed", writeTemp(t, "ragged.csv", "a,b\n1,2\n3\n")}, "line 3: a row's field count differs"},
		{"bad field in a targets file", []string{"--targets", writeTemp(t, "t.txt", "GET "+base+"/a\n\nGET "+base+"/{{row.user}}\n")}, "t.txt:3: the URL: "},
		{"bad header field in a targets file", []string{"--targets", writeTemp(t, "t.txt", "GET "+base+"/a\nX-Id: {{uid}}\n"), "--feed", feed}, `t.txt:1: header "X-Id: {{uid}}": "{{uid}}": unknown field "uid"`},
		{"bad JSON target", []string{"--targets", writeTemp(t, "t.json", `{"method":"GET","url":"`+base+`/","headers":{}}`+"\n")}, `t.json:1: `},
		{"bad JSON body", []string{"--targets", writeTemp(t, "t.json", `{"method":"GET","url":"`+base+`/","body":"not base64!"}`+"\n")}, `t.json:1: `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, append([]string{"run", "-d", "1s"}, tc.args...)...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr: %s", code, exitUsage, stderr)
			}
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if first := lines[0]; !strings.HasPrefix(first, "loadgen: ") || !strings.Contains(first, tc.msg) {
				t.Errorf("first line %q, want one mentioning %q", first, tc.msg)
			}
			if len(lines) > 2 { // the error, then "Run 'loadgen run --help' for usage."
				t.Errorf("more than one line of error:\n%s", stderr)
			}
			if stdout != "" {
				t.Errorf("output before the error: %s", stdout)
			}
		})
	}
	if n := len(srv.requests()); n != 0 {
		t.Errorf("the target got %d requests: load was sent", n)
	}
}
