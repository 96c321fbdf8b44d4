package httpbin

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// FuzzEcho checks that, whatever the query, body and header, the echo
// document is valid JSON and round-trips the body (as UTF-8) in "data".
func FuzzEcho(f *testing.F) {
	f.Add("a=1&a=2&b=x+y", "hello", "text/plain", "v")
	f.Add("%zz&=&&x=%41", "a=1&b=%2", formType, "\x00\xff")
	f.Add("", `{"k": [1, "\u00e9"]}`, "application/json", `"quoted"`)
	f.Add("q=\xff", "\x01\"\\\u2028", "", "")
	f.Fuzz(func(t *testing.T, query, body, ctype, hv string) {
		r := &request{
			method: []byte("POST"),
			host:   []byte("127.0.0.1:1"),
			uri:    []byte("/anything?" + query),
			body:   []byte(body),
			remote: []byte("127.0.0.1"),
			header: []kv{{[]byte("Content-Type"), []byte(ctype)}, {[]byte("X-H"), []byte(hv)}, {[]byte("X-H"), []byte("2")}},
		}
		out := appendEcho(nil, r, anythingFields)
		var m map[string]any
		dec := json.NewDecoder(bytes.NewReader(out))
		dec.UseNumber() // "json" may hold numbers beyond float64
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("invalid JSON: %v\n%s", err, out)
		}
		if r.isForm() {
			return
		}
		var want strings.Builder
		for _, c := range body { // each byte that is not UTF-8 becomes U+FFFD
			want.WriteRune(c)
		}
		if m["data"] != want.String() {
			t.Fatalf("data %q, want %q", m["data"], want.String())
		}
	})
}
