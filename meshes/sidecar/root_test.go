package sidecar

import (
	"context"
	"testing"
)

// RootMissing is the one check, and the one wording, of sidecar paths'
// need for root: a sweep's dry run says it and NewPods fails with it,
// before it makes anything.
func TestRootMissing(t *testing.T) {
	defer func(f func() int) { geteuid = f }(geteuid)
	const need = "sidecar paths need root: network namespaces, iptables and a proxy as UID 1337 (run with sudo)"
	for _, tc := range []struct {
		euid int
		want string
	}{{0, ""}, {1000, need}, {65534, need}} {
		geteuid = func() int { return tc.euid }
		if got := errString(RootMissing()); got != tc.want {
			t.Errorf("euid %d: RootMissing() = %q, want %q", tc.euid, got, tc.want)
		}
		if tc.want == "" {
			continue // as root NewPods would make namespaces
		}
		if p, err := NewPods(context.Background(), "lgtroot", 250); p != nil || errString(err) != tc.want {
			t.Errorf("euid %d: NewPods = %v, %q, want %q", tc.euid, p, errString(err), tc.want)
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
