package rpc

import (
	"bytes"

	"loadgen/loadgen/protocol/h2wire"
)

// requestFields are a call's headers, the same for every call of a Dialer.
// gRPC's deadline header (grpc-timeout) is not among them: the client
// enforces deadlines itself.
func requestFields(s settings, tls bool, method string) []h2wire.Field {
	authority := s.Target
	if s.authority != "" {
		authority = s.authority
	}
	ua := "loadgen"
	if s.userAgent != "" {
		ua = s.userAgent
	}
	scheme := "http"
	if tls {
		scheme = "https"
	}
	f := []h2wire.Field{
		{Name: ":method", Value: "POST"},
		{Name: ":scheme", Value: scheme},
		{Name: ":path", Value: method},
		{Name: ":authority", Value: authority},
		{Name: "content-type", Value: "application/grpc"},
		{Name: "user-agent", Value: ua},
		{Name: "te", Value: "trailers"},
	}
	for i := 0; i+1 < len(s.md); i += 2 {
		f = append(f, h2wire.Field{Name: s.md[i], Value: s.md[i+1]})
	}
	return f
}

// responseFields is what a response's header block says, as far as a
// gRPC client cares.
type responseFields struct {
	httpStatus int   // :status, 0 when absent
	grpc       bool  // content-type application/grpc…
	grpcStatus int32 // grpc-status, -1 when absent
}

// The fields responseFields takes: what the HPACK decoder is asked for.
const (
	fieldStatus = iota
	fieldContentType
	fieldGRPCStatus
)

var responseNames = [...]string{
	fieldStatus:      ":status",
	fieldContentType: "content-type",
	fieldGRPCStatus:  "grpc-status",
}

// wantFields are the fields the connection hands the reply (h2conn reads
// :status itself): its Field's name n is responseNames[n+1].
var wantFields = responseNames[fieldContentType:]

func (r *responseFields) reset() {
	*r = responseFields{grpcStatus: -1}
}

// add takes one decoded header field: name indexes responseNames.
func (r *responseFields) add(name int, value []byte) {
	switch name {
	case fieldStatus:
		r.httpStatus = atoi(value)
	case fieldContentType:
		r.grpc = bytes.HasPrefix(value, []byte("application/grpc"))
	case fieldGRPCStatus:
		if n := atoi(value); n >= 0 {
			r.grpcStatus = int32(n)
		}
	}
}

// atoi parses a small non-negative decimal, -1 when it is not one.
func atoi(s []byte) int {
	if len(s) == 0 || len(s) > 9 {
		return -1
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// httpToCode maps an HTTP status without a gRPC status to a gRPC code, as
// gRPC's spec (http-grpc-status-mapping.md) says.
func httpToCode(status int) int32 {
	switch status {
	case 400:
		return 13 // Internal
	case 401:
		return 16 // Unauthenticated
	case 403:
		return 7 // PermissionDenied
	case 404:
		return 12 // Unimplemented
	case 429, 502, 503, 504:
		return 14 // Unavailable
	}
	return 2 // Unknown
}
