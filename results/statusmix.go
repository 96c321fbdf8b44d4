package results

import (
	"fmt"
	"sort"
	"strings"
)

// StatusMix says in one line how a path's answers differ in kind from its
// baseline's at the same step, or "" when they do not: a status class
// (1xx to 4xx; gRPC: a code other than OK) that one of them answered and
// the other did not. A proxy that redirects (ingress-nginx's 308 to
// HTTPS) or answers for the target (a 404 for an unknown host) has cut
// the path short, and its figures compare with nothing: "nginx answered
// 308 to every request: the target was never reached". Overload answers
// (HTTP 5xx; gRPC Unavailable, Resource exhausted, Deadline exceeded,
// Cancelled) are the path's to measure, and are errors already. got and
// base are Summary.Status of a run of protocol (raw TCP has none).
func StatusMix(protocol, path string, got map[int]int64, baseline string, base map[int]int64) string {
	grpc := strings.HasPrefix(protocol, "grpc")
	kind := func(code int) (int, bool) { // a code's class, and whether it is judged
		if grpc {
			switch code {
			case 1, 4, 8, 14:
				return code, false
			}
			return code, true
		}
		c := code / 100
		return c, c >= 1 && c <= 4
	}
	classes := func(m map[int]int64) map[int]bool {
		out := map[int]bool{}
		for code, n := range m {
			if k, ok := kind(code); ok && n > 0 {
				out[k] = true
			}
		}
		return out
	}
	sum := func(m map[int]int64) (n int64) {
		for _, k := range m {
			n += k
		}
		return n
	}
	if sum(got) == 0 || sum(base) == 0 {
		return "" // a step that had no answer fails on its own
	}
	gotK, baseK := classes(got), classes(base)
	foreign := func(m map[int]int64, other map[int]bool) []shareOf {
		var total int64
		for _, n := range m {
			total += n
		}
		var out []shareOf
		for code, n := range m {
			if k, ok := kind(code); ok && n > 0 && !other[k] {
				out = append(out, shareOf{code, float64(n) / float64(total)})
			}
		}
		sort.Slice(out, func(i, j int) bool {
			return out[i].share > out[j].share || out[i].share == out[j].share && out[i].code < out[j].code
		})
		return out
	}
	name := func(code int) string {
		if grpc {
			return grpcCode(code)
		}
		return fmt.Sprint(code)
	}
	answered := func(m map[int]int64) string {
		var codes []int
		for code, n := range m {
			if n > 0 {
				codes = append(codes, code)
			}
		}
		sort.Ints(codes)
		var s []string
		for _, c := range codes {
			s = append(s, name(c))
		}
		if len(s) == 0 {
			return "nothing"
		}
		return strings.Join(s, ", ")
	}
	ok := 2 // the class of a success: 2xx, gRPC's OK
	if grpc {
		ok = 0
	}
	if f := foreign(base, gotK); len(f) > 0 && !baseK[ok] && gotK[ok] {
		return fmt.Sprintf("the baseline (%s) answered %s where %s answered %s: the two paths did not reach the same server", baseline, shares(f, name), path, answered(got))
	}
	if f := foreign(got, baseK); len(f) > 0 {
		why := "those answers were not the target's"
		if k, _ := kind(f[0].code); !grpc && k == 3 {
			why = "the target was never reached"
		}
		if f[0].share < 1 {
			why = strings.Replace(why, "the target was never reached", "those requests never reached the target", 1)
		}
		return fmt.Sprintf("%s answered %s: %s (the baseline (%s) answered %s)", path, shares(f, name), why, baseline, answered(base))
	}
	if f := foreign(base, gotK); len(f) > 0 {
		return fmt.Sprintf("the baseline (%s) answered %s where %s answered %s: the two paths did not reach the same server", baseline, shares(f, name), path, answered(got))
	}
	return ""
}

type shareOf struct {
	code  int
	share float64
}

// shares reads "308 to every request" or "404 to 12.5% of requests and
// 308 to 3.0%".
func shares(f []shareOf, name func(int) string) string {
	var parts []string
	for i, s := range f {
		switch {
		case s.share >= 1:
			parts = append(parts, name(s.code)+" to every request")
		case i == 0:
			parts = append(parts, fmt.Sprintf("%s to %.1f%% of requests", name(s.code), 100*s.share))
		default:
			parts = append(parts, fmt.Sprintf("%s to %.1f%%", name(s.code), 100*s.share))
		}
	}
	return strings.Join(parts, " and ")
}

// grpcCode names a gRPC status code.
func grpcCode(code int) string {
	names := []string{"OK", "Cancelled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound", "AlreadyExists",
		"PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange", "Unimplemented", "Internal",
		"Unavailable", "DataLoss", "Unauthenticated"}
	if code >= 0 && code < len(names) {
		return fmt.Sprintf("%s (%d)", names[code], code)
	}
	return fmt.Sprintf("code %d", code)
}

// FailStatusMixes fails each step of a path whose answers differ in kind
// from its baseline's at the same step (the same rung, payload, rate and
// repeat: StatusMix), once both have run: its Failed says how. It returns
// the steps it failed, for their files to be written again. Both sweeps,
// local and on a cluster, call it after each step with the steps so far.
func FailStatusMixes(steps []*Step) []*Step {
	key := func(st *Step) string { return fmt.Sprintf("%s|%d|%g|%d", st.Rung, st.Payload, st.Rate, st.Repeat) }
	base := map[string]*Step{}
	for _, st := range steps {
		if st.Baseline && st.Run != nil {
			base[key(st)] = st
		}
	}
	var out []*Step
	for _, st := range steps {
		b := base[key(st)]
		if st.Baseline || b == nil || st.Run == nil || st.Failed != "" || st.Run.Interrupted || b.Run.Interrupted {
			continue
		}
		if why := StatusMix(st.Run.Config.Protocol, st.Path, st.Run.Summary.Status, b.Path, b.Run.Summary.Status); why != "" {
			st.Failed = why
			out = append(out, st)
		}
	}
	return out
}
