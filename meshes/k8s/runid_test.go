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
