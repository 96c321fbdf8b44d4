package h2wire

// staticTable is HPACK's static table (RFC 7541 Appendix A); index i+1 is
// staticTable[i].
var staticTable = [...]struct{ name, value string }{
	{":authority", ""}, {":method", "GET"}, {":method", "POST"}, {":path", "/"},
	{":path", "/index.html"}, {":scheme", "http"}, {":scheme", "https"}, {":status", "200"},
	{":status", "204"}, {":status", "206"}, {":status", "304"}, {":status", "400"},
	{":status", "404"}, {":status", "500"}, {"accept-charset", ""}, {"accept-encoding", "gzip, deflate"},
	{"accept-language", ""}, {"accept-ranges", ""}, {"accept", ""}, {"access-control-allow-origin", ""},
	{"age", ""}, {"allow", ""}, {"authorization", ""}, {"cache-control", ""},
	{"content-disposition", ""}, {"content-encoding", ""}, {"content-language", ""}, {"content-length", ""},
	{"content-location", ""}, {"content-range", ""}, {"content-type", ""}, {"cookie", ""},
	{"date", ""}, {"etag", ""}, {"expect", ""}, {"expires", ""},
	{"from", ""}, {"host", ""}, {"if-match", ""}, {"if-modified-since", ""},
	{"if-none-match", ""}, {"if-range", ""}, {"if-unmodified-since", ""}, {"last-modified", ""},
	{"link", ""}, {"location", ""}, {"max-forwards", ""}, {"proxy-authenticate", ""},
	{"proxy-authorization", ""}, {"range", ""}, {"referer", ""}, {"refresh", ""},
	{"retry-after", ""}, {"server", ""}, {"set-cookie", ""}, {"strict-transport-security", ""},
	{"transfer-encoding", ""}, {"user-agent", ""}, {"vary", ""}, {"via", ""},
	{"www-authenticate", ""},
}

const (
	staticLen     = len(staticTable)
	entryOverhead = 32 // an entry's size beyond its name and value (RFC 7541 §4.1)
)

// staticValues are the static table's values as byte slices, handed to a
// Decoder's caller (read-only).
var staticValues = func() (v [staticLen][]byte) {
	for i, e := range staticTable {
		v[i] = []byte(e.value)
	}
	return v
}()

// staticIndex returns the static-table index of an exact match (or 0) and
// of the first entry with the same name (or 0).
func staticIndex(f Field) (exact, name int) {
	for i, e := range staticTable {
		if e.name != f.Name {
			continue
		}
		if name == 0 {
			name = i + 1
		}
		if e.value == f.Value {
			return i + 1, name
		}
	}
	return 0, name
}
