package sweep

import (
	"strings"
	"testing"
)

// An unknown key is named in the file's words, with the key it is a typo
// of, never the decoder's Go types; the required keys missing are told in
// the same message, counted as listed.
func TestParseSpecKeyErrors(t *testing.T) {
	for name, tc := range []struct {
		file, want string
	}{
		{strings.Replace(goodSpec, "ladder:", "ladderr:", 1),
			"line 7: ladderr is not a sweep key (did you mean \"ladder\"?); ladder is missing: e.g. ladder: c1t1..c128t128"},
		{strings.Replace(goodSpec, "    url: http://127.0.0.1:8081", "    uri: http://127.0.0.1:8081", 1) + "colour: blue\n",
			"line 5: uri is not a path key (did you mean \"url\"?); line 11: colour is not a sweep key (paths, target, ladder, payloads, protocol, endpoint, duration, warmup, timeout, repeats, rate, arrival, jitter_pct, trim_start, trim_end, call, data, protoset, messages, window, proto, import_paths, feed, hops); paths[1] (nginx): url is missing"},
		{strings.Replace(goodSpec, "{process: nginx}", "{proces: nginx}", 1), "line 6: proces is not a watch key (did you mean \"process\"?)"},
		{"paths:\n  - {}\n  - name: a\n", "5 required keys are missing: paths[0]: name and url are missing; paths[1] (a): url is missing; ladder is missing: e.g. ladder: c1t1..c128t128; payloads is missing: e.g. payloads: [100, 1KiB]"},
		{"paths:\n  - {}\nladder: c1t1\npayloads: [1]\n", "2 required keys are missing: paths[0]: name and url are missing"},
	} {
		_, err := Parse(strings.NewReader(tc.file))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%d: %v\nwant %s", name, err, tc.want)
		}
	}
}
