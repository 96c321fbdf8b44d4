package loadgen

import (
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The kernel's receive timestamp is found among the control messages,
// whatever comes before it, and nothing is read past a short or
// malformed one.
func TestStampOf(t *testing.T) {
	ts := unix.NsecToTimespec(1_700_000_000_123_456_789)
	msg := func(level, typ int32, data []byte) []byte {
		b := make([]byte, unix.CmsgSpace(len(data)))
		h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		h.Level, h.Type = level, typ
		h.SetLen(unix.CmsgLen(len(data)))
		copy(b[unix.CmsgLen(0):], data)
		return b
	}
	stamp := msg(unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, unsafe.Slice((*byte)(unsafe.Pointer(&ts)), unsafe.Sizeof(ts)))
	other := msg(unix.SOL_IP, unix.IP_TOS, []byte{1, 0, 0, 0})
	for _, tc := range []struct {
		name string
		b    []byte
		want int64
	}{
		{"none", nil, 0},
		{"stamp", stamp, ts.Nano()},
		{"after another", append(append([]byte{}, other...), stamp...), ts.Nano()},
		{"another only", other, 0},
		{"cut short", stamp[:len(stamp)-4], 0},
		{"header only", stamp[:unix.SizeofCmsghdr], 0},
	} {
		if got := stampOf(tc.b); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

// An answer's time is the kernel's stamp on the loop's clock; the time of
// the read when there is none, or when the wall clock was set between the
// stamp and the read (a stamp before the send, or after the read).
func TestArrived(t *testing.T) {
	now := time.Now()
	sent := now.Add(-10 * time.Millisecond)
	for _, tc := range []struct {
		name string
		ns   int64
		want time.Time
	}{
		{"no stamp", 0, now},
		{"2 ms before the read", now.UnixNano() - 2e6, now.Add(-2 * time.Millisecond)},
		{"before the send", now.UnixNano() - 20e6, now},
		{"after the read", now.UnixNano() + 1e6, now},
	} {
		if got := arrived(now, tc.ns, sent); !got.Equal(tc.want) {
			t.Errorf("%s: %v before the read, want %v", tc.name, now.Sub(got), now.Sub(tc.want))
		}
	}
}
