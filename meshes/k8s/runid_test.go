package k8s

import (
	"strings"
	"testing"
)

// A new run id is a valid, distinct value of the run label each time.
func TestNewRunID(t *testing.T) {
	seen := map[string]bool{}
	for range 20 {
		id := NewRunID()
		if len(id) != 9 || !strings.HasPrefix(id, "r") || !dnsLabel.MatchString(id) || seen[id] {
			t.Errorf("run id %q: want r and 8 hex digits, a DNS label, new each time", id)
		}
		seen[id] = true
	}
}

// OrNewRunID keeps an id given and makes a new one for none: never
// DefaultRunID, rendering's.
func TestOrNewRunID(t *testing.T) {
	for _, tc := range []struct{ id, want string }{{"r0123abcd", "r0123abcd"}, {"mine", "mine"}, {"", ""}} {
		got := OrNewRunID(tc.id)
		switch {
		case tc.want != "" && got != tc.want:
			t.Errorf("OrNewRunID(%q) = %q, want it kept", tc.id, got)
		case tc.want == "" && (len(got) != 9 || !strings.HasPrefix(got, "r") || got == DefaultRunID || got == OrNewRunID("")):
			t.Errorf("OrNewRunID(%q) = %q, want a new run id (r and 8 hex digits) each time", tc.id, got)
		}
	}
}
