package leftover

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// RemoveItems is loadgen cleanup's loop and Clean's: each leftover
// removed, or with a dry run none, a namespace left with ErrNeedsRoot when
// this process is not root, a failure kept with its error; each outcome
// told as it comes, in order.
func TestRemoveItems(t *testing.T) {
	defer func(f func() int) { geteuid = f }(geteuid)
	for _, tc := range []struct {
		name   string
		euid   int
		dryRun bool
		kind   Kind
		fate   Fate
		err    error // errors.Is; nil: none
		stays  bool  // the directory is still there
	}{
		{name: "dir", euid: 1000, kind: Dir, fate: Removed},
		{name: "dir as root", euid: 0, kind: Dir, fate: Removed},
		{name: "dir, dry run", euid: 1000, dryRun: true, kind: Dir, fate: WouldRemove, stays: true},
		{name: "namespace, not root", euid: 1000, kind: Namespace, fate: NeedsRoot, err: ErrNeedsRoot, stays: true},
		{name: "namespace, not root, dry run", euid: 1000, dryRun: true, kind: Namespace, fate: WouldRemove, stays: true},
		{name: "unknown kind", euid: 0, kind: "socket", fate: Failed, stays: true},
	} {
		geteuid = func() int { return tc.euid }
		dir := filepath.Join(t.TempDir(), "loadgen-haproxy-1-1")
		if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
			t.Fatal(err)
		}
		it := Item{Kind: tc.kind, Name: dir, PID: 1, Why: "pid 1 is gone"}
		if tc.kind == Namespace {
			it.Name = "lg1p0c" // never reached: not root, or a dry run
		}
		var told []Outcome
		outs := RemoveItems(context.Background(), []Item{it, it}, tc.dryRun, func(o Outcome) { told = append(told, o) })
		if len(outs) != 2 || len(told) != 2 {
			t.Fatalf("%s: %d outcomes, %d told, want 2", tc.name, len(outs), len(told))
		}
		o := outs[0]
		if o.Item != it || o.Fate != tc.fate || told[0].Fate != tc.fate {
			t.Errorf("%s: outcome %+v, want fate %d", tc.name, o, tc.fate)
		}
		switch {
		case tc.fate == Failed && o.Err == nil:
			t.Errorf("%s: failed without an error", tc.name)
		case tc.fate != Failed && !errors.Is(o.Err, tc.err) || tc.err == nil && tc.fate != Failed && o.Err != nil:
			t.Errorf("%s: error %v, want %v", tc.name, o.Err, tc.err)
		}
		if _, err := os.Stat(dir); (err == nil) != tc.stays {
			t.Errorf("%s: directory there %v, want %v", tc.name, err == nil, tc.stays)
		}
		// a leftover gone meanwhile (removed twice) is removed all the same
		if tc.fate == Removed && outs[1].Fate != Removed {
			t.Errorf("%s: the second removal %+v", tc.name, outs[1])
		}
	}
}
