package protocol

import (
	"testing"

	"loadgen/internal/allocs"
)

// A buffer handed back is lent again, none is made once warm, and at
// most keepSpare are kept.
func TestBuffersLend(t *testing.T) {
	b := NewBuffers(1024)
	p := b.Get()
	if len(p) != 0 || cap(p) != 1024 {
		t.Fatalf("len %d cap %d, want 0 and 1024", len(p), cap(p))
	}
	b.Put(append(p, "used"...))
	if n := allocs.Count(100, func() { b.Put(b.Get()) }); n > allocs.Slack {
		t.Errorf("%d allocations in 100 loans once warm", n)
	}
	if q := b.Get(); len(q) != 0 || &q[:1][0] != &p[:1][0] {
		t.Error("the buffer handed back is not lent again, emptied")
	}
	b.Put(make([]byte, 10)) // not one of its size: dropped
	lent := make([][]byte, keepSpare+10)
	for i := range lent {
		lent[i] = b.Get()
	}
	for _, q := range lent {
		b.Put(q)
	}
	if n := len(b.spare); n != keepSpare {
		t.Errorf("%d spare buffers kept, want at most %d", n, keepSpare)
	}
}
