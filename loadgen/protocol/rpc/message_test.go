package rpc

import (
	"encoding/binary"
	"slices"
	"testing"

	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"loadgen/targets/grpcecho/echopb"
)

func TestRequestEncoding(t *testing.T) {
	for _, tc := range []struct {
		size, respSize int
	}{{0, 0}, {1, 0}, {100, 0}, {200, 5000}, {0, -1}, {70000, 0}} {
		b := newRequest(settings{Config: Config{Size: tc.size, ResponseSize: tc.respSize}})
		if b[0] != 0 || int(binary.BigEndian.Uint32(b[1:])) != len(b)-prefixLen {
			t.Fatalf("size %d: bad prefix % x", tc.size, b[:prefixLen])
		}
		var p echopb.Payload
		if err := proto.Unmarshal(b[prefixLen:], &p); err != nil {
			t.Fatalf("size %d: %v", tc.size, err)
		}
		if len(p.Body) != tc.size || int(p.ResponseSize) != tc.respSize {
			t.Errorf("size %d/%d: decoded body %d, response_size %d", tc.size, tc.respSize, len(p.Body), p.ResponseSize)
		}
	}
	if b := newRequest(settings{Config: Config{Health: true}}); len(b) != prefixLen {
		t.Errorf("health request is %d bytes, want %d (service \"\")", len(b), prefixLen)
	}
	for _, msg := range [][]byte{nil, {0x08, 0x01}, make([]byte, 300)} {
		b := newRequest(settings{Config: Config{Call: "/pkg.S/M", Message: msg}})
		if string(b) != string(frame(msg)) {
			t.Errorf("call message of %d bytes: request % x", len(msg), b)
		}
	}
}

// frame prefixes each message and concatenates them, as a stream carries them.
func frame(msgs ...[]byte) []byte {
	var b []byte
	for _, m := range msgs {
		b = append(b, 0)
		b = binary.BigEndian.AppendUint32(b, uint32(len(m)))
		b = append(b, m...)
	}
	return b
}

// readAll feeds b to a msgReader in chunks of n bytes and checks each
// message it completes.
func readAll(b []byte, n int, check replyCheck) []verdict {
	var m msgReader
	var out []verdict
	for len(b) > 0 {
		p := b[:min(n, len(b))]
		b = b[len(p):]
		for len(p) > 0 {
			k, complete := m.feed(p)
			p = p[k:]
			if complete {
				v := replyBad
				if !m.bad {
					v = check.check(m.head[:m.nh], m.size)
				}
				out = append(out, v)
			}
		}
	}
	return out
}

func TestCheckEcho(t *testing.T) {
	marshal := func(p *echopb.Payload) []byte {
		b, err := proto.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		msg  []byte
		want int
		v    verdict
	}{
		{"empty", nil, 0, replyOK},
		{"body", marshal(&echopb.Payload{Body: make([]byte, 300)}), 300, replyOK},
		{"body and size", marshal(&echopb.Payload{Body: make([]byte, 40000), ResponseSize: 7}), 40000, replyOK},
		{"size first", append([]byte{0x10, 0x07}, marshal(&echopb.Payload{Body: make([]byte, 50)})...), 50, replyOK},
		{"wrong length", marshal(&echopb.Payload{Body: make([]byte, 10)}), 11, replyBad},
		{"truncated", marshal(&echopb.Payload{Body: make([]byte, 300)})[:100], 300, replyBad},
		{"garbage", []byte{0xff, 0xff, 0xff}, 0, replyBad},
		{"unknown fields", append(marshal(&echopb.Payload{Body: make([]byte, 3)}), 0x1d, 1, 2, 3, 4), 3, replyOK},
	} {
		for _, chunk := range []int{1, 7, 1 << 20} {
			got := readAll(frame(tc.msg, tc.msg), chunk, replyCheck{kind: echoReply, want: tc.want})
			if len(got) != 2 || got[0] != tc.v || got[1] != tc.v {
				t.Errorf("%s, chunks of %d: verdicts %v, want two %v", tc.name, chunk, got, tc.v)
			}
		}
	}
	// A compressed message is not what was asked for.
	b := frame(marshal(&echopb.Payload{Body: []byte("x")}))
	b[0] = 1
	if got := readAll(b, 100, replyCheck{kind: echoReply, want: 1}); len(got) != 1 || got[0] != replyBad {
		t.Errorf("compressed message: %v", got)
	}
}

func TestCheckHealth(t *testing.T) {
	for st, want := range map[healthpb.HealthCheckResponse_ServingStatus]verdict{
		healthpb.HealthCheckResponse_SERVING:     replyOK,
		healthpb.HealthCheckResponse_NOT_SERVING: replyNotServing,
		healthpb.HealthCheckResponse_UNKNOWN:     replyNotServing, // encoded as no field at all
	} {
		b, err := proto.Marshal(&healthpb.HealthCheckResponse{Status: st})
		if err != nil {
			t.Fatal(err)
		}
		if got := readAll(frame(b), 1, replyCheck{kind: healthReply}); len(got) != 1 || got[0] != want {
			t.Errorf("%v: verdicts %v, want %v", st, got, want)
		}
	}
}

func TestCheckAny(t *testing.T) {
	tag, varint := protowire.AppendTag, protowire.AppendVarint
	field := func(b []byte, num protowire.Number, n int) []byte { // bytes field of n zero bytes
		return protowire.AppendBytes(tag(b, num, protowire.BytesType), make([]byte, n))
	}
	// nested opens depth groups, numbered 1 up, and closes them, the
	// outermost with number last.
	nested := func(depth int, last protowire.Number) []byte {
		var b []byte
		for i := range depth {
			b = tag(b, protowire.Number(i+1), protowire.StartGroupType)
		}
		b = varint(tag(b, 100, protowire.VarintType), 1)
		for i := depth; i > 0; i-- {
			num := protowire.Number(i)
			if i == 1 {
				num = last
			}
			b = tag(b, num, protowire.EndGroupType)
		}
		return b
	}
	garbage := make([]byte, 60)
	for i := range garbage {
		garbage[i] = 0xff
	}
	for _, tc := range []struct {
		name string
		msg  []byte
		v    verdict
	}{
		{"empty", nil, replyOK},
		{"varint, fixed32, fixed64", protowire.AppendFixed64(tag(protowire.AppendFixed32(tag(varint(tag(nil, 1, protowire.VarintType), 300), 2, protowire.Fixed32Type), 7), 3, protowire.Fixed64Type), 8), replyOK},
		{"bytes past the head", varint(tag(field(nil, 4, 1000), 5, protowire.VarintType), 9), replyOK},
		{"groups", nested(3, 1), replyOK},
		{"groups deeper than tracked", nested(12, 1), replyOK},
		{"group closed by another number", nested(3, 7), replyBad},
		{"group never closed", nested(3, 1)[:len(nested(3, 1))-1], replyBad},
		{"group end without a start", tag(nil, 1, protowire.EndGroupType), replyBad},
		{"field longer than the message", field(nil, 1, 10)[:8], replyBad},
		{"fixed64 past the end", protowire.AppendFixed32(tag(nil, 1, protowire.Fixed64Type), 1), replyBad},
		{"field number 0", []byte{0x00, 0x01}, replyBad},
		{"wire type 6", []byte{0x0e}, replyBad},
		{"garbage", garbage[:3], replyBad},
		// Past the head, nothing is seen but lengths: accepted.
		{"garbage past the head", append(varint(tag(field(nil, 1, 28), 2, protowire.VarintType), 1), garbage...), replyOK},
	} {
		for _, chunk := range []int{1, 7, 1 << 20} {
			got := readAll(frame(tc.msg, tc.msg), chunk, replyCheck{kind: anyReply})
			if len(got) != 2 || got[0] != tc.v || got[1] != tc.v {
				t.Errorf("%s, chunks of %d: verdicts %v, want two %v", tc.name, chunk, got, tc.v)
			}
		}
	}
}

func FuzzReadReply(f *testing.F) {
	f.Add(frame([]byte{0x0a, 0x02, 'h', 'i'}), 3, 2)
	f.Add(frame([]byte{0x08, 0x01}), 1, 0)
	f.Add(frame([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}), 2, 1)
	f.Fuzz(func(t *testing.T, b []byte, chunk, want int) {
		chunk = max(chunk, 1)
		for _, kind := range []replyKind{echoReply, healthReply, anyReply} {
			// The same verdicts whether the bytes come whole, in the fuzzed
			// chunks or one at a time: framing never depends on reads.
			check := replyCheck{kind: kind, want: want}
			whole := readAll(b, max(len(b), 1), check)
			if got := readAll(b, chunk, check); !slices.Equal(got, whole) {
				t.Fatalf("kind %v: verdicts %v in chunks of %d, %v whole", kind, got, chunk, whole)
			}
			if got := readAll(b, 1, check); !slices.Equal(got, whole) {
				t.Fatalf("kind %v: verdicts %v a byte at a time, %v whole", kind, got, whole)
			}
		}
	})
}
