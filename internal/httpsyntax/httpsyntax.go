// Package httpsyntax holds the bits of HTTP/1.1 syntax (RFC 9110, 9112)
// that both loadgen's client parser and its httpbin target's parser use.
package httpsyntax

// TrimOWS cuts the optional whitespace, spaces and tabs, around a field
// value (RFC 9110 §5.5); bytes.Trim with a cutset builds a set per call.
func TrimOWS(v []byte) []byte {
	for len(v) > 0 && (v[0] == ' ' || v[0] == '\t') {
		v = v[1:]
	}
	for len(v) > 0 && (v[len(v)-1] == ' ' || v[len(v)-1] == '\t') {
		v = v[:len(v)-1]
	}
	return v
}
