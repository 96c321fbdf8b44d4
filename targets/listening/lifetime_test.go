package listening

import (
	"slices"
	"testing"
	"time"
)

// ForArgs gives loadgen serve --for its lifetime as the commands always
// wrote it: "1h", "24h".
func TestForArgs(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{HelperLifetime, "1h"},
		{LabLifetime, "24h"},
		{10 * time.Minute, "10m"},
		{90 * time.Minute, "1h30m"},
		{90 * time.Second, "1m30s"},
		{5 * time.Second, "5s"},
	} {
		got := ForArgs(c.d)
		if !slices.Equal(got, []string{"--for", c.want}) {
			t.Errorf("ForArgs(%v) = %q, want [--for %s]", c.d, got, c.want)
		}
		if d, err := time.ParseDuration(got[1]); err != nil || d != c.d {
			t.Errorf("ForArgs(%v)'s %q reads back as %v, %v", c.d, got[1], d, err)
		}
	}
}
