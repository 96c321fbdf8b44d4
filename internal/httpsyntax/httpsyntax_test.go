package httpsyntax

import "testing"

func TestTrimOWS(t *testing.T) {
	for in, want := range map[string]string{
		"": "", " \t ": "", "a": "a", " \tkeep-alive\t ": "keep-alive", "a b": "a b", "\t1, 2 ": "1, 2",
	} {
		if got := string(TrimOWS([]byte(in))); got != want {
			t.Errorf("TrimOWS(%q) = %q, want %q", in, got, want)
		}
	}
}
